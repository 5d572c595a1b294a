-- teamdeck engine, version 8: a write's wake recorded without planning a query at each write.
--
-- Measured on the send and claim paths (pg_stat_statements, nested statements tracked; a
-- PL/pgSQL loop timing each call with clock_timestamp()): recording a wake cost more than the
-- write it recorded. teamdeck.wake_later() was a SQL function whose body has a FROM clause: it
-- cannot be inlined, and PostgreSQL parses and plans such a body again at every call from a
-- trigger (its plan lives no longer than the statement that called it): ~150 us a call on
-- this machine under load, against ~25 us for the set_config it wraps. A send recorded one
-- wake, a teammate's claim cycle two (the task it finished, the task it claimed). And
-- teamdeck.wake(), for the one payload a send leaves, ran a query splitting and sorting it.
--
-- * teamdeck.wake_later() is PL/pgSQL: its statements are planned once per session and kept.
--   The same rule: the payload appended to the session's teamdeck.wake, part of the
--   transaction (a write rolled back, or its savepoint, leaves nothing to wake).
-- * teamdeck.wake() notifies a single payload as it is; a list (a relay's batch) as before,
--   each distinct id once.
-- * No function's authority changes: both run as the caller and write nothing but the
--   caller's own session setting (anyone may notify the channel anyway: a notification is only
--   a hint to read through one's own policies).

CREATE OR REPLACE FUNCTION teamdeck.wake_later(p text) RETURNS void LANGUAGE plpgsql AS $$
BEGIN
  PERFORM pg_catalog.set_config('teamdeck.wake', pg_catalog.concat_ws(',',
    NULLIF(pg_catalog.current_setting('teamdeck.wake', true), ''), p), false);
END $$;

CREATE OR REPLACE FUNCTION teamdeck.wake() RETURNS integer LANGUAGE plpgsql AS $$
DECLARE
  due text := pg_catalog.current_setting('teamdeck.wake', true);
  payload text;
  n integer := 0;
BEGIN
  IF due IS NULL OR due OPERATOR(pg_catalog.=) '' THEN
    RETURN 0;
  END IF;
  PERFORM pg_catalog.set_config('teamdeck.wake', '', false);
  IF pg_catalog.strpos(due, ',') OPERATOR(pg_catalog.=) 0 THEN
    PERFORM pg_catalog.pg_notify('teamdeck', due);
    RETURN 1;
  END IF;
  FOR payload IN SELECT DISTINCT p FROM pg_catalog.unnest(pg_catalog.string_to_array(due, ',')) p
  LOOP
    PERFORM pg_catalog.pg_notify('teamdeck', payload);
    n := n OPERATOR(pg_catalog.+) 1;
  END LOOP;
  RETURN n;
END $$;

-- A watcher's read of an inbox past its cursor (app.engine.messages.since), its plan kept for
-- the session. Prepared by the client, it was planned again at every read, row-level
-- security's subqueries included: the generic plan's estimate for "seq > $3" (a third of the
-- inbox) never beat a custom plan's (the last few rows), so PostgreSQL never kept one (~0.45
-- ms of the reader's backend CPU a read under load, against ~0.05 ms to run it). The generic
-- plan is the same index range scan. Only this statement: a cursor over the events table
-- (logs.py), say, may want a custom plan. It runs as the caller: the messages' policies
-- decide what it returns, as for the query it replaces.
CREATE FUNCTION teamdeck.inbox_since(p_team text, p_recipient text, p_seq bigint)
RETURNS TABLE (seq bigint, body text, read boolean) LANGUAGE plpgsql STABLE
SET plan_cache_mode = force_generic_plan AS $$
BEGIN
  RETURN QUERY SELECT m.seq, m.body::text, m.read FROM teamdeck.messages m
    WHERE m.team OPERATOR(pg_catalog.=) p_team AND m.recipient OPERATOR(pg_catalog.=) p_recipient
      AND m.seq OPERATOR(pg_catalog.>) p_seq
    ORDER BY m.seq;
END $$;
REVOKE ALL ON FUNCTION teamdeck.inbox_since(text, text, bigint) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION teamdeck.inbox_since(text, text, bigint)
  TO teamdeck_agent, teamdeck_desk;
