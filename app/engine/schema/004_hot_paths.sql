-- teamdeck engine, version 4: a send and a claim in one call each, at the price of the disk.
--
-- Measured on the delivery and claim paths (pg_stat_statements, EXPLAIN ANALYZE): a claim ran
-- fourteen row-level-security initplans, each a call of a SQL function (teamdeck.my_team() and
-- its kind) that PostgreSQL parses and plans again at every statement; a send ran eight; the
-- watcher read the inbox counters after each wake to learn which inbox grew.
--
-- * The policies of the hot tables (tasks: read, change; messages: read; inboxes) ask for the
--   caller's identity with subqueries in place, the same rule (an initplan each, as before,
--   without a call); the others call my_team(), my_member(), my_desk(), now PL/pgSQL: the
--   same query, its plan kept for the session (a third of the cost per call).
-- * teamdeck.send() and teamdeck.claim_next() are the teamdeck client's send and claim: one
--   call each, checking the caller's identity once (the login role, session_user: inside a
--   SECURITY DEFINER function current_user is the owner) with the same rules as the policies
--   (the sender is the caller's member name, or "user" for the desk; an agent claims only for
--   itself; the team is the caller's). The tables' grants and policies stay: a role writing
--   to the tables directly meets the policies as before.
-- * The claimable tasks have an index of their own, whose predicate is the claim's visible-and-
--   free test: the plan PostgreSQL keeps for the claim (a generic plan, after five calls) walks
--   it in id order and stops at the first task. With the wider tasks_open it bitmap-scanned
--   every pending task and sorted them, at every claim.
-- * An update of a task bumps its version in a trigger of its own that runs as the writer (it
--   writes nothing but the row's own version and time): the SECURITY DEFINER trigger, which
--   saves and restores the search_path at each row, is left to inserts (the task's number).
-- * Every inbox has a number, and a message the number of its inbox: the wake of a send says
--   "m:<inbox>:<seq>" (ids only: LISTEN is not access-controlled), which tells a watcher which
--   of its inboxes grew without a read.

-- The policies of the hot tables (a claim, a completion, an inbox read) ask for the caller's
-- identity with a subquery in place: planned with the statement, no call at all.
ALTER POLICY read ON teamdeck.tasks USING (team = (SELECT i.team FROM teamdeck.identities i
  WHERE i.role = current_user));
ALTER POLICY change ON teamdeck.tasks
  USING (team = (SELECT i.team FROM teamdeck.identities i WHERE i.role = current_user)
    AND (coalesce((SELECT i.desk FROM teamdeck.identities i WHERE i.role = current_user), false)
      OR owner IS NULL
      OR owner = (SELECT i.member FROM teamdeck.identities i WHERE i.role = current_user)))
  WITH CHECK (team = (SELECT i.team FROM teamdeck.identities i WHERE i.role = current_user)
    AND (coalesce((SELECT i.desk FROM teamdeck.identities i WHERE i.role = current_user), false)
      OR owner IS NULL
      OR owner = (SELECT i.member FROM teamdeck.identities i WHERE i.role = current_user)));
ALTER POLICY read ON teamdeck.messages
  USING (team = (SELECT i.team FROM teamdeck.identities i WHERE i.role = current_user)
    AND (recipient = (SELECT i.member FROM teamdeck.identities i WHERE i.role = current_user)
      OR sender = (SELECT i.member FROM teamdeck.identities i WHERE i.role = current_user)
      OR coalesce((SELECT i.desk FROM teamdeck.identities i WHERE i.role = current_user),
                  false)));
ALTER POLICY own ON teamdeck.inboxes
  USING (team = (SELECT i.team FROM teamdeck.identities i WHERE i.role = current_user)
    AND (name = (SELECT i.member FROM teamdeck.identities i WHERE i.role = current_user)
      OR coalesce((SELECT i.desk FROM teamdeck.identities i WHERE i.role = current_user),
                  false)));

CREATE OR REPLACE FUNCTION teamdeck.my_team() RETURNS text LANGUAGE plpgsql STABLE AS
$$ BEGIN RETURN (SELECT team FROM teamdeck.identities WHERE role = current_user); END $$;
CREATE OR REPLACE FUNCTION teamdeck.my_member() RETURNS text LANGUAGE plpgsql STABLE AS
$$ BEGIN RETURN (SELECT member FROM teamdeck.identities WHERE role = current_user); END $$;
CREATE OR REPLACE FUNCTION teamdeck.my_desk() RETURNS boolean LANGUAGE plpgsql STABLE AS
$$ BEGIN
  RETURN (SELECT coalesce(bool_or(desk), false) FROM teamdeck.identities
          WHERE role = current_user);
END $$;

DROP INDEX teamdeck.tasks_open;
CREATE INDEX tasks_claimable ON teamdeck.tasks (team, id)
  WHERE status = 'pending' AND owner IS NULL
    AND coalesce(metadata->>'_internal', '') IN ('', 'false');

DROP TRIGGER task_before ON teamdeck.tasks;
CREATE TRIGGER task_before BEFORE INSERT ON teamdeck.tasks
  FOR EACH ROW EXECUTE FUNCTION teamdeck.task_before();
-- Qualified names: it runs with the writer's search_path.
CREATE FUNCTION teamdeck.task_version() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  NEW.version := OLD.version OPERATOR(pg_catalog.+) 1;
  NEW.updated_at := pg_catalog.now();
  RETURN NEW;
END $$;
CREATE TRIGGER task_version BEFORE UPDATE ON teamdeck.tasks
  FOR EACH ROW EXECUTE FUNCTION teamdeck.task_version();

ALTER TABLE teamdeck.inboxes ADD COLUMN id bigint GENERATED ALWAYS AS IDENTITY UNIQUE;
ALTER TABLE teamdeck.messages ADD COLUMN inbox bigint;
UPDATE teamdeck.messages m SET inbox = i.id FROM teamdeck.inboxes i
  WHERE i.team = m.team AND i.name = m.recipient;

CREATE OR REPLACE FUNCTION teamdeck.message_before() RETURNS trigger LANGUAGE plpgsql
SECURITY DEFINER SET search_path = pg_catalog, teamdeck AS $$
BEGIN
  INSERT INTO teamdeck.inboxes AS i (team, name, last_seq) VALUES (NEW.team, NEW.recipient, 1)
  ON CONFLICT (team, name) DO UPDATE SET last_seq = i.last_seq + 1
  RETURNING last_seq, id INTO NEW.seq, NEW.inbox;
  NEW.body := jsonb_set(NEW.body, '{from}', to_jsonb(NEW.sender));
  NEW.body := NEW.body - 'read';
  RETURN NEW;
END $$;
-- teamdeck.send() numbers its message itself (no role but the owner may write the inbox
-- column): the trigger numbers the others.
DROP TRIGGER message_before ON teamdeck.messages;
CREATE TRIGGER message_before BEFORE INSERT ON teamdeck.messages
  FOR EACH ROW WHEN (NEW.inbox IS NULL) EXECUTE FUNCTION teamdeck.message_before();

-- The caller (the login role) as its identity row; refused (42501, one line) unless it stands
-- for a member of p_team. The administrator (the tables' owner) has no identity and may act as
-- anyone, as the policies let it. Called by the SECURITY DEFINER functions below, with their
-- rights and search_path (not one of its own: that is saved and restored at each call).
CREATE FUNCTION teamdeck.caller(p_team text) RETURNS teamdeck.identities LANGUAGE plpgsql
STABLE AS $$
DECLARE
  me teamdeck.identities;
BEGIN
  SELECT * INTO me FROM teamdeck.identities i WHERE i.role = session_user;
  IF FOUND THEN
    IF me.team IS DISTINCT FROM p_team THEN
      RAISE EXCEPTION 'role % is not a member of team %', session_user, p_team
        USING ERRCODE = 'insufficient_privilege';
    END IF;
    RETURN me;
  END IF;
  IF pg_catalog.pg_has_role(session_user, (SELECT c.relowner FROM pg_catalog.pg_class c
      WHERE c.oid = 'teamdeck.messages'::pg_catalog.regclass), 'USAGE') THEN
    RETURN ROW(session_user, p_team, NULL, true)::teamdeck.identities;
  END IF;
  RAISE EXCEPTION 'role % stands for no member of a team', session_user
    USING ERRCODE = 'insufficient_privilege';
END $$;
REVOKE ALL ON FUNCTION teamdeck.caller(text) FROM PUBLIC;

-- Whether the caller may send as p_sender: its own member name; the desk's also the person.
-- (Version 5 widens the desk's to the teammates its machine hosts.)
CREATE FUNCTION teamdeck.may_send_as(me teamdeck.identities, p_team text, p_sender text)
RETURNS boolean LANGUAGE sql STABLE AS $$
  SELECT me.member IS NULL OR p_sender = me.member OR (p_sender = 'user' AND me.desk)
$$;
REVOKE ALL ON FUNCTION teamdeck.may_send_as(teamdeck.identities, text, text) FROM PUBLIC;

-- A send: the inbox's number and the message's seq, and whether it is new (false: this uuid
-- was delivered before, a retry after a lost acknowledgement: the first delivery's numbers,
-- or none if that uuid is another sender's). The seq is taken under the counter row's lock,
-- held until commit, as the trigger does.
CREATE FUNCTION teamdeck.send(p_team text, p_recipient text, p_uuid uuid, p_sender text,
                              p_body jsonb, OUT inbox bigint, OUT seq bigint, OUT fresh boolean)
LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, teamdeck AS $$
DECLARE
  me teamdeck.identities := teamdeck.caller(p_team);
  was teamdeck.messages;
BEGIN
  IF NOT coalesce(teamdeck.may_send_as(me, p_team, p_sender), false) THEN
    RAISE EXCEPTION 'role % may not send as %', session_user, p_sender
      USING ERRCODE = 'insufficient_privilege';
  END IF;
  IF p_recipient NOT IN ('team-lead', 'user') AND NOT EXISTS (
      SELECT 1 FROM teamdeck.members m WHERE m.team = p_team AND m.name = p_recipient) THEN
    RAISE EXCEPTION '% is not a member of team %', p_recipient, p_team
      USING ERRCODE = 'insufficient_privilege';
  END IF;
  fresh := false;
  SELECT * INTO was FROM teamdeck.messages m WHERE m.uuid = p_uuid;
  IF FOUND THEN
    IF was.team = p_team AND was.sender = p_sender THEN
      inbox := was.inbox;
      seq := was.seq;
    END IF;
    RETURN;
  END IF;
  INSERT INTO teamdeck.inboxes AS i (team, name, last_seq) VALUES (p_team, p_recipient, 1)
  ON CONFLICT (team, name) DO UPDATE SET last_seq = i.last_seq + 1
  RETURNING i.id, i.last_seq INTO inbox, seq;
  INSERT INTO teamdeck.messages AS m (team, recipient, uuid, sender, body, seq, inbox)
  VALUES (p_team, p_recipient, p_uuid, p_sender,
          jsonb_set(p_body, '{from}', to_jsonb(p_sender)) - 'read', seq, inbox)
  ON CONFLICT (uuid) DO NOTHING;
  fresh := FOUND;
  IF NOT fresh THEN  -- the same uuid sent at the same moment on another link won
    inbox := NULL;
    seq := NULL;
  END IF;
END $$;
REVOKE ALL ON FUNCTION teamdeck.send(text, text, uuid, text, jsonb) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION teamdeck.send(text, text, uuid, text, jsonb)
  TO teamdeck_agent, teamdeck_desk;

-- claim_next in one call: the claim a token made before (a repeat after a lost link), else the
-- lowest-id pending, unowned, visible task whose blockers are all resolved, if p_agent owns no
-- open task, locked with SKIP LOCKED. An agent claims for itself only; the desk for anyone.
-- Its plan is kept for the session (a generic plan, after five calls), which cannot know how
-- many tasks the claimer owns: for the busy check it took a sequential scan of the board,
-- expected to stop early. Every part of the claim has an index: sequential scans are off.
CREATE FUNCTION teamdeck.claim_next(p_team text, p_agent text, p_status text, p_token uuid)
RETURNS SETOF teamdeck.tasks LANGUAGE plpgsql SECURITY DEFINER
SET search_path = pg_catalog, teamdeck SET enable_seqscan = off AS $$
DECLARE
  me teamdeck.identities := teamdeck.caller(p_team);
BEGIN
  IF me.member IS NOT NULL AND NOT me.desk AND p_agent IS DISTINCT FROM me.member THEN
    RAISE EXCEPTION 'role % may not claim for %', session_user, p_agent
      USING ERRCODE = 'insufficient_privilege';
  END IF;
  RETURN QUERY SELECT * FROM teamdeck.tasks d
    WHERE d.claim_token = p_token AND d.team = p_team AND d.owner = p_agent;
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
REVOKE ALL ON FUNCTION teamdeck.claim_next(text, text, text, uuid) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION teamdeck.claim_next(text, text, text, uuid)
  TO teamdeck_agent, teamdeck_desk;
