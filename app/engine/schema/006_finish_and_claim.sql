-- teamdeck engine, version 6: a teammate's finished task and its next claim in one commit.
--
-- Counted per claim cycle of a teammate (finish the task in hand, claim the next) before this
-- version: two calls, each its own commit (the completion an UPDATE through the tasks'
-- policies, the claim teamdeck.claim_next), each followed by its wake: four round trips and
-- two flushes to disk. The disk's flush is the price of a commit on this kind of machine.
--
-- * teamdeck.claim_next takes the task the caller finishes (p_done): it is completed, then the
--   next task claimed, in the function's one transaction: one round trip and one commit for
--   both (the client wakes the watchers for both ids in one statement after it). The rule of
--   the completion is the policies' (an agent changes only its own tasks), checked in the
--   function: the task must be p_agent's, and an agent names only itself as p_agent (the
--   desk anyone). A task p_agent owns that is already finished is left as it is, so a call
--   repeated after a lost acknowledgement finishes nothing twice and finds the claim it made.
--   Called without p_done (four arguments) it claims only, as in version 4.
-- * The claim token's own index is gone: a claim repeated after a lost acknowledgement looks
--   for its token among the caller's open tasks, through the busy check's index (tasks_busy).
--   Each claim and each completion moved the token's index too (an UPDATE of a task that
--   changes an indexed column writes every index of the table: five became four).

DROP FUNCTION teamdeck.claim_next(text, text, text, uuid);
DROP INDEX teamdeck.tasks_token;

CREATE FUNCTION teamdeck.claim_next(p_team text, p_agent text, p_status text, p_token uuid,
                                    p_done integer DEFAULT NULL)
RETURNS SETOF teamdeck.tasks LANGUAGE plpgsql SECURITY DEFINER
SET search_path = pg_catalog, teamdeck SET enable_seqscan = off AS $$
DECLARE
  me teamdeck.identities := teamdeck.caller(p_team);
BEGIN
  IF me.member IS NOT NULL AND NOT me.desk AND p_agent IS DISTINCT FROM me.member THEN
    RAISE EXCEPTION 'role % may not claim for %', session_user, p_agent
      USING ERRCODE = 'insufficient_privilege';
  END IF;
  IF p_done IS NOT NULL THEN
    UPDATE teamdeck.tasks t SET status = 'completed'
      WHERE t.team = p_team AND t.id = p_done AND t.owner = p_agent
        AND t.status NOT IN ('completed', 'deleted');
    IF NOT FOUND AND NOT EXISTS (
        SELECT 1 FROM teamdeck.tasks t
        WHERE t.team = p_team AND t.id = p_done AND t.owner = p_agent) THEN
      RAISE EXCEPTION 'task #% of team % is not %''s to complete', p_done, p_team, p_agent
        USING ERRCODE = 'insufficient_privilege';
    END IF;
  END IF;
  RETURN QUERY SELECT * FROM teamdeck.tasks d
    WHERE d.team = p_team AND d.owner = p_agent AND d.status NOT IN ('completed', 'deleted')
      AND d.claim_token = p_token;
  IF FOUND THEN
    RETURN;
  END IF;
  RETURN QUERY
  WITH claimed AS (
    UPDATE teamdeck.tasks t SET owner = p_agent, status = coalesce(p_status, t.status),
           claim_token = p_token
    WHERE t.team = p_team AND t.id = (
      SELECT c.id FROM teamdeck.tasks c
      WHERE c.team = p_team AND c.status = 'pending' AND c.owner IS NULL
        AND coalesce(c.metadata->>'_internal', '') IN ('', 'false')
        AND (c.blocked_by = '{}' OR NOT EXISTS (
          SELECT 1 FROM unnest(teamdeck.task_numbers(c.blocked_by)) r (id)
          WHERE (SELECT b.status FROM teamdeck.tasks b WHERE b.team = c.team AND b.id = r.id)
            NOT IN ('completed', 'deleted')))
        AND NOT EXISTS (
          SELECT 1 FROM teamdeck.tasks o WHERE o.team = p_team AND o.owner = p_agent
            AND o.status NOT IN ('completed', 'deleted'))
      ORDER BY c.id LIMIT 1 FOR UPDATE SKIP LOCKED)
    RETURNING t.*)
  SELECT * FROM claimed;
END $$;
REVOKE ALL ON FUNCTION teamdeck.claim_next(text, text, text, uuid, integer) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION teamdeck.claim_next(text, text, text, uuid, integer)
  TO teamdeck_agent, teamdeck_desk;
