-- teamdeck engine, version 10: a send writes what it must and no more.
--
-- Measured on the send (a PL/pgSQL loop timing each of its statements, pg_stat_wal's records
-- per statement; the same on plain tables beside it): a send wrote ten WAL records where an
-- INSERT that notifies writes two, and spent most of its time beyond the bare insert's in its
-- two writes. The inbox's counter was an upsert (INSERT .. ON CONFLICT DO UPDATE: the row
-- locked, a record, then updated, another); the message's insert was a speculative insertion
-- (ON CONFLICT (uuid) DO NOTHING: a confirming record), into three indexes (the id's, the
-- uuid's, and (team, recipient, seq), two text keys), and its foreign key to the team ran a
-- trigger per row that locked the team's row (a record, and every sender of the team locking
-- the same row).
--
-- * The counter is an UPDATE of the inbox's row, the recipient's membership in its WHERE:
--   one record. The upsert is left for an inbox's first message (no row yet), with the same
--   membership test: not a member, no row, no number, the same refusal.
-- * A repeated uuid is found by a look-up in the uuid's index before the insert, a plain
--   INSERT: no speculative insertion. Two sends of one uuid (a client's retry) go to one inbox
--   and wait for each other on its counter's row: the second finds the first's row once the
--   first committed. A uuid taken by another sender for another inbox at the same moment
--   meets the uuid's unique index: an error for that (hostile) send.
-- * A message's key is (inbox, seq), two bigints, where (team, recipient, seq) was: the same
--   order and uniqueness (an inbox is one (team, recipient), numbered by the counter). The id
--   column, which nothing read but the client's mark-read (now by seq), and its index go.
--   Readers find an inbox's rows by its number: the feed has it from the wake; the others ask
--   teamdeck.inbox_number(team, name), which answers for the caller's own team only (the rows
--   read are the messages' policies' to decide, as before).
-- * The foreign key from messages to teams goes; a team deleted still takes its messages
--   with it (a trigger on teams, as the cascade did).
-- * The same rules, in the same order: the caller's team, the sender, the recipient, then the
--   uuid. No grant or policy changes.

ALTER TABLE teamdeck.messages DROP CONSTRAINT messages_team_fkey;
ALTER TABLE teamdeck.messages DROP CONSTRAINT messages_team_recipient_seq_key;
ALTER TABLE teamdeck.messages DROP COLUMN id;
ALTER TABLE teamdeck.messages ALTER COLUMN inbox SET NOT NULL;
ALTER TABLE teamdeck.messages ADD CONSTRAINT messages_pkey PRIMARY KEY (inbox, seq);

CREATE FUNCTION teamdeck.team_gone() RETURNS trigger LANGUAGE plpgsql
SECURITY DEFINER SET search_path = pg_catalog, teamdeck AS $$
BEGIN
  DELETE FROM teamdeck.messages m WHERE m.team = OLD.name;
  RETURN NULL;
END $$;
CREATE TRIGGER team_gone AFTER DELETE ON teamdeck.teams
  FOR EACH ROW EXECUTE FUNCTION teamdeck.team_gone();

-- The number of the caller's team's inbox p_name (NULL if none, or another team's).
-- SECURITY DEFINER: an agent's role sees only its own inbox's row, and reads what it sent to
-- another inbox through the messages' policies.
CREATE FUNCTION teamdeck.inbox_number(p_team text, p_name text) RETURNS bigint
LANGUAGE sql STABLE SECURITY DEFINER SET search_path = pg_catalog, teamdeck AS $$
  SELECT i.id FROM teamdeck.inboxes i
  WHERE i.team = p_team AND i.name = p_name
    AND coalesce((SELECT w.team = p_team FROM teamdeck.identities w
                  WHERE w.role = session_user), true)
$$;
REVOKE ALL ON FUNCTION teamdeck.inbox_number(text, text) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION teamdeck.inbox_number(text, text) TO teamdeck_agent, teamdeck_desk;

CREATE OR REPLACE FUNCTION teamdeck.inbox_since(p_team text, p_recipient text, p_seq bigint)
RETURNS TABLE (seq bigint, body text, read boolean) LANGUAGE plpgsql STABLE
SET plan_cache_mode = force_generic_plan AS $$
BEGIN
  RETURN QUERY SELECT m.seq, m.body::text, m.read FROM teamdeck.messages m
    WHERE m.inbox OPERATOR(pg_catalog.=) teamdeck.inbox_number(p_team, p_recipient)
      AND m.seq OPERATOR(pg_catalog.>) p_seq
    ORDER BY m.seq;
END $$;

CREATE OR REPLACE FUNCTION teamdeck.send(p_team text, p_recipient text, p_uuid uuid,
                                         p_sender text, p_body jsonb,
                                         OUT inbox bigint, OUT seq bigint, OUT fresh boolean)
LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, teamdeck AS $$
DECLARE
  me teamdeck.identities;
BEGIN
  SELECT * INTO me FROM teamdeck.identities i WHERE i.role = session_user;
  IF NOT FOUND OR me.team IS DISTINCT FROM p_team THEN
    me := teamdeck.caller(p_team);  -- the administrator, or the one-line refusal
  END IF;
  IF NOT coalesce(teamdeck.may_send_as(me, p_team, p_sender), false) THEN
    RAISE EXCEPTION 'role % may not send as %', session_user, p_sender
      USING ERRCODE = 'insufficient_privilege';
  END IF;
  UPDATE teamdeck.inboxes i SET last_seq = i.last_seq + 1
    WHERE i.team = p_team AND i.name = p_recipient
      AND (p_recipient IN ('team-lead', 'user') OR EXISTS (
        SELECT 1 FROM teamdeck.members m WHERE m.team = p_team AND m.name = p_recipient))
    RETURNING i.id, i.last_seq INTO inbox, seq;
  IF NOT FOUND THEN  -- the inbox's first message (or no member: no row)
    INSERT INTO teamdeck.inboxes AS i (team, name, last_seq)
      SELECT p_team, p_recipient, 1
      WHERE p_recipient IN ('team-lead', 'user') OR EXISTS (
        SELECT 1 FROM teamdeck.members m WHERE m.team = p_team AND m.name = p_recipient)
    ON CONFLICT (team, name) DO UPDATE SET last_seq = i.last_seq + 1
    RETURNING i.id, i.last_seq INTO inbox, seq;
    IF NOT FOUND THEN
      RAISE EXCEPTION '% is not a member of team %', p_recipient, p_team
        USING ERRCODE = 'insufficient_privilege';
    END IF;
  END IF;
  PERFORM FROM teamdeck.messages m WHERE m.uuid = p_uuid;
  fresh := NOT FOUND;
  IF fresh THEN
    INSERT INTO teamdeck.messages (team, recipient, uuid, sender, body, seq, inbox)
    VALUES (p_team, p_recipient, p_uuid, p_sender,
            jsonb_set(p_body, '{from}', to_jsonb(p_sender)) - 'read', seq, inbox);
    PERFORM pg_notify('teamdeck', format('m:%s:%s', inbox, seq));
    RETURN;
  END IF;
  -- A repeat: the number goes back (the inbox's row stays locked by this transaction: no
  -- other send took one since); the first delivery's numbers, or none for another's uuid.
  UPDATE teamdeck.inboxes i SET last_seq = i.last_seq - 1 WHERE i.id = send.inbox;
  inbox := NULL;
  seq := NULL;
  SELECT m.inbox, m.seq INTO inbox, seq FROM teamdeck.messages m
    WHERE m.uuid = p_uuid AND m.team = p_team AND m.sender = p_sender;
END $$;
