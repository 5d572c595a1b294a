-- teamdeck engine, version 7: a write and its wake in one round trip.
--
-- Counted per message before this version: the send (its own transaction and commit), then
-- the wake (pg_notify in a transaction of its own, after the commit: notifying inside the
-- send's transaction holds PostgreSQL's notify lock through the commit's flush and serializes
-- every writer). The wake's payload came from the send's result, so the client waited for the
-- send's answer before it could ask for the wake: two round trips on the sender's side of
-- every delivery, and the watcher woke only after the second.
--
-- * A write records what it changed in the session (the setting teamdeck.wake: ids only, as
--   the notifications carry), from triggers that run as the writer: a message's inbox number
--   and seq, a task's id. The setting is part of the transaction: a write that rolls back
--   (or a savepoint rolled back) leaves nothing to wake.
-- * teamdeck.wake() notifies what the session recorded and forgets it. The client sends it
--   right behind the write, in the same round trip (psycopg's pipeline, a Sync between the
--   two: the wake is a transaction of its own, after the commit, so the notify lock is never
--   held through a flush). A transaction that only notifies has nothing to flush.
-- * No function's authority changes: the triggers and teamdeck.wake() run as the caller and
--   write nothing but the caller's own session setting; anyone may notify the channel anyway
--   (a notification is only a hint to read through one's own policies).

-- Record a payload for the session's next teamdeck.wake().
CREATE FUNCTION teamdeck.wake_later(p text) RETURNS void LANGUAGE sql AS $$
  SELECT FROM pg_catalog.set_config('teamdeck.wake', pg_catalog.concat_ws(',',
    NULLIF(pg_catalog.current_setting('teamdeck.wake', true), ''), p), false)
$$;
CREATE FUNCTION teamdeck.message_wake() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  PERFORM teamdeck.wake_later(pg_catalog.format('m:%s:%s', NEW.inbox, NEW.seq));
  RETURN NULL;
END $$;
CREATE FUNCTION teamdeck.task_wake() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  PERFORM teamdeck.wake_later(pg_catalog.format('t:%s', NEW.id));
  RETURN NULL;
END $$;
CREATE TRIGGER message_wake AFTER INSERT ON teamdeck.messages
  FOR EACH ROW EXECUTE FUNCTION teamdeck.message_wake();
CREATE TRIGGER task_wake AFTER INSERT OR UPDATE ON teamdeck.tasks
  FOR EACH ROW EXECUTE FUNCTION teamdeck.task_wake();

-- What the session's writes recorded, notified once each and forgotten; how many.
CREATE FUNCTION teamdeck.wake() RETURNS integer LANGUAGE plpgsql AS $$
DECLARE
  due text := pg_catalog.current_setting('teamdeck.wake', true);
  payload text;
  n integer := 0;
BEGIN
  IF due IS NULL OR due OPERATOR(pg_catalog.=) '' THEN
    RETURN 0;
  END IF;
  PERFORM pg_catalog.set_config('teamdeck.wake', '', false);
  FOR payload IN SELECT DISTINCT p FROM pg_catalog.unnest(pg_catalog.string_to_array(due, ',')) p
  LOOP
    PERFORM pg_catalog.pg_notify('teamdeck', payload);
    n := n OPERATOR(pg_catalog.+) 1;
  END LOOP;
  RETURN n;
END $$;
