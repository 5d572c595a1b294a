-- teamdeck engine, version 9: a send wakes its watchers from its own commit, in one statement.
--
-- Measured on the delivery path (bench/engine.py, the sender in a process of its own): a send
-- was four statements in the simple query protocol (BEGIN, the send, COMMIT, then
-- teamdeck.wake() in a transaction of its own), and the watchers were signalled only at the
-- wake's commit, after the send's; inside teamdeck.send(), the caller was looked up by a call
-- of its own, the message's uuid by a query of its own before the insert, the recipient's
-- membership by another, and an AFTER trigger recorded the wake.
--
-- * A message's wake ("m:<inbox>:<seq>", ids only) is notified inside the transaction that
--   inserts it: PostgreSQL delivers it only once that transaction committed, the flush to disk
--   included (a send rolled back, or its savepoint, notifies nothing). The notify lock is then
--   held through the send's flush, so two sends' commits no longer share one flush; sends are
--   one per message a teammate writes, and the claim path (tasks) keeps version 7's wake after
--   the commit. teamdeck.send() notifies its own message; a message inserted directly (a role
--   writing the table under its policies) is notified by the trigger that numbers it. The
--   recording trigger message_wake goes.
-- * teamdeck.send() looks the caller up once, in place (teamdeck.caller() for the
--   administrator and for the refusals), checks the recipient in the statement that takes the
--   inbox's next number (no row to upsert: not a member), and inserts the message first: its
--   uuid's unique index says whether it is a repeat. A repeat gives its number back (the inbox
--   row stays locked by this transaction: no other send took one since) and answers with the
--   first delivery's numbers, as before; a uuid of another sender's, with none.
-- * The same rules as before, in the same order: the caller's team, the sender (the caller's
--   member name; the desk's also the person or a teammate its machine hosts), then the
--   recipient. No grant changes.

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
  INSERT INTO teamdeck.messages AS m (team, recipient, uuid, sender, body, seq, inbox)
  VALUES (p_team, p_recipient, p_uuid, p_sender,
          jsonb_set(p_body, '{from}', to_jsonb(p_sender)) - 'read', seq, inbox)
  ON CONFLICT (uuid) DO NOTHING;
  fresh := FOUND;
  IF fresh THEN
    PERFORM pg_notify('teamdeck', format('m:%s:%s', inbox, seq));
    RETURN;
  END IF;
  -- A repeat (or the same uuid sent at the same moment on another link, now committed).
  UPDATE teamdeck.inboxes i SET last_seq = i.last_seq - 1 WHERE i.id = send.inbox;
  inbox := NULL;
  seq := NULL;
  SELECT m.inbox, m.seq INTO inbox, seq FROM teamdeck.messages m
    WHERE m.uuid = p_uuid AND m.team = p_team AND m.sender = p_sender;
END $$;

DROP TRIGGER message_wake ON teamdeck.messages;
DROP FUNCTION teamdeck.message_wake();

-- A message inserted directly (not through teamdeck.send()): numbered, and notified inside
-- its transaction as a send's.
CREATE OR REPLACE FUNCTION teamdeck.message_before() RETURNS trigger LANGUAGE plpgsql
SECURITY DEFINER SET search_path = pg_catalog, teamdeck AS $$
BEGIN
  INSERT INTO teamdeck.inboxes AS i (team, name, last_seq) VALUES (NEW.team, NEW.recipient, 1)
  ON CONFLICT (team, name) DO UPDATE SET last_seq = i.last_seq + 1
  RETURNING last_seq, id INTO NEW.seq, NEW.inbox;
  NEW.body := jsonb_set(NEW.body, '{from}', to_jsonb(NEW.sender));
  NEW.body := NEW.body - 'read';
  PERFORM pg_notify('teamdeck', format('m:%s:%s', NEW.inbox, NEW.seq));
  RETURN NEW;
END $$;
