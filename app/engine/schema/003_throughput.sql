-- teamdeck engine, version 3: claims and sends at the pace of the disk's shared flush.
--
-- * Messages and tasks no longer notify from a trigger. PostgreSQL holds one lock per database
--   from a notifying transaction's commit to its end, the flush to disk included: every send
--   and every claim of every team reached the disk one after the other instead of sharing a
--   flush. The writer now notifies in a transaction of its own (app.engine.link.wake), which
--   has nothing to flush; requests and members (rare writes) keep their triggers.
-- * claim_next checked, for every pending task, every open task of the team against its
--   blockedBy (text ids: no index served the lookup) and every task the claimer ever owned:
--   on a board of a thousand tasks a claim took half a second. Now blockedBy ids become task
--   numbers (teamdeck.task_numbers) looked up by primary key, and the claimer's open tasks
--   have an index of their own that finished tasks leave.

DROP TRIGGER messages_notify ON teamdeck.messages;
DROP TRIGGER tasks_notify ON teamdeck.tasks;

CREATE FUNCTION teamdeck.task_numbers(refs text[]) RETURNS integer[]
LANGUAGE sql IMMUTABLE PARALLEL SAFE AS
$$ SELECT coalesce(array_agg(r::integer), '{}') FROM unnest(refs) r WHERE r ~ '^[1-9][0-9]{0,8}$' $$;

DROP INDEX teamdeck.tasks_owner;
CREATE INDEX tasks_busy ON teamdeck.tasks (team, owner)
  WHERE owner IS NOT NULL AND status NOT IN ('completed', 'deleted');
