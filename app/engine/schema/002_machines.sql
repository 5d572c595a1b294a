-- teamdeck engine, version 2: what a team across machines projects.
--
-- * Event log lines (kind 'log'): a teammate's machine sends its log, the desk's machine keeps
--   the copy its dashboard reads. A line is keyed by its byte offset in the log, so a send
--   repeated after a lost link is one line.
-- * Tasks made on the lead's machine keep the id its files gave them: the desk may name the id
--   (the counter moves past it), so the same task is #N on every machine.

CREATE UNIQUE INDEX events_log_line ON teamdeck.events (team, actor, ((body->>'offset')))
  WHERE kind = 'log';

CREATE OR REPLACE FUNCTION teamdeck.task_before() RETURNS trigger LANGUAGE plpgsql
SECURITY DEFINER SET search_path = pg_catalog, teamdeck AS $$
BEGIN
  IF TG_OP = 'INSERT' THEN
    -- session_user: inside SECURITY DEFINER current_user is the owner. Agents have no grant
    -- on the id column anyway.
    IF NEW.id > 0 AND NOT EXISTS (
        SELECT 1 FROM teamdeck.identities WHERE role = session_user AND NOT desk) THEN
      INSERT INTO teamdeck.task_ids AS t (team, last_id) VALUES (NEW.team, NEW.id)
      ON CONFLICT (team) DO UPDATE SET last_id = greatest(t.last_id, NEW.id);
    ELSE
      INSERT INTO teamdeck.task_ids AS t (team, last_id) VALUES (NEW.team, 1)
      ON CONFLICT (team) DO UPDATE SET last_id = t.last_id + 1
      RETURNING last_id INTO NEW.id;
    END IF;
    NEW.version := 1;
  ELSE
    NEW.version := OLD.version + 1;
  END IF;
  NEW.updated_at := now();
  RETURN NEW;
END $$;

GRANT INSERT (id) ON teamdeck.tasks TO teamdeck_desk;
-- A teammate's machine reads its own lines back (to know where it stopped).
CREATE POLICY own_log ON teamdeck.events FOR SELECT
  USING (team = (SELECT teamdeck.my_team()) AND actor = (SELECT teamdeck.my_member())
    AND kind = 'log');
GRANT SELECT ON teamdeck.events TO teamdeck_agent;
