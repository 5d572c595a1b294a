-- teamdeck engine, version 1: teams, members, messages, tasks, requests and answers, events.
--
-- Who may do what is decided here, by the server, not by the clients: every agent logs in with
-- its own role (a member of teamdeck_agent) and the person's side (the dashboard and the lead)
-- with its team's desk role (a member of teamdeck_desk). teamdeck.identities says which team
-- and member name a role stands for; row-level security compares every row with it. The
-- tables' owner (the role that ran the migrations) is the administrator and is not subject
-- to the policies.

DO $$ BEGIN
  IF NOT EXISTS (SELECT 1 FROM pg_roles WHERE rolname = 'teamdeck_agent') THEN
    CREATE ROLE teamdeck_agent NOLOGIN;
  END IF;
  IF NOT EXISTS (SELECT 1 FROM pg_roles WHERE rolname = 'teamdeck_desk') THEN
    CREATE ROLE teamdeck_desk NOLOGIN;
  END IF;
END $$;

GRANT USAGE ON SCHEMA teamdeck TO teamdeck_agent, teamdeck_desk;
GRANT SELECT ON teamdeck.migrations TO teamdeck_agent, teamdeck_desk;

CREATE TABLE teamdeck.identities (
  role name PRIMARY KEY,
  team text NOT NULL,
  member text NOT NULL,
  desk boolean NOT NULL DEFAULT false,
  UNIQUE (team, member, desk)
);

-- The current role's team, member name and whether it is the team's desk (NULL for a role
-- that is none: the administrator, who owns the tables and is not held by the policies).
-- A role stands for one member of one team. The policies call these as uncorrelated
-- subqueries, "(SELECT teamdeck.my_team())": evaluated once per statement, not per row.
CREATE FUNCTION teamdeck.my_team() RETURNS text LANGUAGE sql STABLE AS
$$ SELECT team FROM teamdeck.identities WHERE role = current_user $$;
CREATE FUNCTION teamdeck.my_member() RETURNS text LANGUAGE sql STABLE AS
$$ SELECT member FROM teamdeck.identities WHERE role = current_user $$;
CREATE FUNCTION teamdeck.my_desk() RETURNS boolean LANGUAGE sql STABLE AS
$$ SELECT coalesce(bool_or(desk), false) FROM teamdeck.identities WHERE role = current_user $$;

CREATE TABLE teamdeck.teams (
  name text PRIMARY KEY,
  config jsonb NOT NULL DEFAULT '{}',
  created_at timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE teamdeck.members (
  team text NOT NULL REFERENCES teamdeck.teams (name) ON DELETE CASCADE,
  name text NOT NULL,
  data jsonb NOT NULL DEFAULT '{}',        -- the member's fields as in config.json
  machine text,
  pid integer,
  heartbeat timestamptz,
  state text NOT NULL DEFAULT 'joined',     -- joined | running | gone
  PRIMARY KEY (team, name)
);

-- One counter per inbox: a message's seq is taken under the counter row's lock, held until
-- commit, so within an inbox seq order is commit order and "seq > cursor" misses nothing.
CREATE TABLE teamdeck.inboxes (
  team text NOT NULL,
  name text NOT NULL,
  last_seq bigint NOT NULL DEFAULT 0,
  PRIMARY KEY (team, name)
);

CREATE TABLE teamdeck.messages (
  id bigserial PRIMARY KEY,
  team text NOT NULL REFERENCES teamdeck.teams (name) ON DELETE CASCADE,
  recipient text NOT NULL,
  seq bigint NOT NULL DEFAULT 0,
  uuid uuid NOT NULL UNIQUE,               -- one per send: a retried send is one message
  sender text NOT NULL,
  body jsonb NOT NULL,                     -- the inbox entry (its "from" is set to sender)
  read boolean NOT NULL DEFAULT false,
  created_at timestamptz NOT NULL DEFAULT now(),
  UNIQUE (team, recipient, seq)
);

CREATE TABLE teamdeck.task_ids (
  team text PRIMARY KEY,
  last_id integer NOT NULL DEFAULT 0
);

CREATE TABLE teamdeck.tasks (
  team text NOT NULL REFERENCES teamdeck.teams (name) ON DELETE CASCADE,
  id integer NOT NULL DEFAULT 0,
  subject text NOT NULL,
  description text NOT NULL DEFAULT '',
  active_form text,
  status text NOT NULL DEFAULT 'pending'
    CHECK (status IN ('pending', 'in_progress', 'completed', 'deleted')),
  owner text,
  blocks text[] NOT NULL DEFAULT '{}',
  blocked_by text[] NOT NULL DEFAULT '{}',
  metadata jsonb,
  version integer NOT NULL DEFAULT 1,
  claim_token uuid,                        -- the claim that set owner (a retried claim finds it)
  create_key uuid UNIQUE,                  -- one per create: a retried create is one task
  updated_at timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (team, id)
);
CREATE INDEX tasks_open ON teamdeck.tasks (team, id) WHERE status = 'pending' AND owner IS NULL;
CREATE INDEX tasks_token ON teamdeck.tasks (claim_token) WHERE claim_token IS NOT NULL;
CREATE INDEX tasks_owner ON teamdeck.tasks (team, owner) WHERE owner IS NOT NULL;

CREATE TABLE teamdeck.requests (
  n bigserial UNIQUE,
  team text NOT NULL REFERENCES teamdeck.teams (name) ON DELETE CASCADE,
  id text NOT NULL,
  requester text NOT NULL,
  kind text NOT NULL,
  body jsonb NOT NULL,
  answer jsonb,
  answered_by name,
  created_at timestamptz NOT NULL DEFAULT now(),
  answered_at timestamptz,
  PRIMARY KEY (team, id)
);

CREATE TABLE teamdeck.events (
  id bigserial PRIMARY KEY,
  team text NOT NULL REFERENCES teamdeck.teams (name) ON DELETE CASCADE,
  actor text NOT NULL,
  kind text NOT NULL,
  body jsonb NOT NULL DEFAULT '{}',
  at timestamptz NOT NULL DEFAULT now()
);

-- ---------------------------------------------------------------- triggers
-- SECURITY DEFINER: they write what no agent may write itself (the counters) and notify.
-- Each pins its search_path. NOTIFY carries ids only: LISTEN is not access-controlled, so a
-- payload is only a wake-up; the listener reads the row through its own policies.

CREATE FUNCTION teamdeck.message_before() RETURNS trigger LANGUAGE plpgsql SECURITY DEFINER
SET search_path = pg_catalog, teamdeck AS $$
BEGIN
  INSERT INTO teamdeck.inboxes AS i (team, name, last_seq) VALUES (NEW.team, NEW.recipient, 1)
  ON CONFLICT (team, name) DO UPDATE SET last_seq = i.last_seq + 1
  RETURNING last_seq INTO NEW.seq;
  NEW.body := jsonb_set(NEW.body, '{from}', to_jsonb(NEW.sender));
  NEW.body := NEW.body - 'read';
  RETURN NEW;
END $$;
CREATE TRIGGER message_before BEFORE INSERT ON teamdeck.messages
  FOR EACH ROW EXECUTE FUNCTION teamdeck.message_before();

CREATE FUNCTION teamdeck.task_before() RETURNS trigger LANGUAGE plpgsql SECURITY DEFINER
SET search_path = pg_catalog, teamdeck AS $$
BEGIN
  IF TG_OP = 'INSERT' THEN
    INSERT INTO teamdeck.task_ids AS t (team, last_id) VALUES (NEW.team, 1)
    ON CONFLICT (team) DO UPDATE SET last_id = t.last_id + 1
    RETURNING last_id INTO NEW.id;
    NEW.version := 1;
  ELSE
    NEW.version := OLD.version + 1;
  END IF;
  NEW.updated_at := now();
  RETURN NEW;
END $$;
CREATE TRIGGER task_before BEFORE INSERT OR UPDATE ON teamdeck.tasks
  FOR EACH ROW EXECUTE FUNCTION teamdeck.task_before();

CREATE FUNCTION teamdeck.notify_change() RETURNS trigger LANGUAGE plpgsql SECURITY DEFINER
SET search_path = pg_catalog, teamdeck AS $$
BEGIN
  IF TG_TABLE_NAME = 'messages' THEN
    PERFORM pg_notify('teamdeck', 'm:' || NEW.id);
  ELSIF TG_TABLE_NAME = 'tasks' THEN
    PERFORM pg_notify('teamdeck', 't:' || NEW.id);
  ELSIF TG_TABLE_NAME = 'requests' THEN
    PERFORM pg_notify('teamdeck', 'r:' || NEW.n);
  ELSE
    PERFORM pg_notify('teamdeck', 'p:');
  END IF;
  RETURN NULL;
END $$;
CREATE TRIGGER messages_notify AFTER INSERT ON teamdeck.messages
  FOR EACH ROW EXECUTE FUNCTION teamdeck.notify_change();
CREATE TRIGGER tasks_notify AFTER INSERT OR UPDATE ON teamdeck.tasks
  FOR EACH ROW EXECUTE FUNCTION teamdeck.notify_change();
CREATE TRIGGER requests_notify AFTER INSERT OR UPDATE ON teamdeck.requests
  FOR EACH ROW EXECUTE FUNCTION teamdeck.notify_change();
CREATE TRIGGER members_notify AFTER INSERT OR DELETE OR UPDATE OF state, data, machine
  ON teamdeck.members FOR EACH ROW EXECUTE FUNCTION teamdeck.notify_change();

-- ---------------------------------------------------------------- privileges and policies

GRANT SELECT ON teamdeck.identities, teamdeck.teams, teamdeck.members, teamdeck.inboxes,
  teamdeck.messages, teamdeck.tasks, teamdeck.requests TO teamdeck_agent, teamdeck_desk;
GRANT INSERT (team, recipient, uuid, sender, body) ON teamdeck.messages
  TO teamdeck_agent, teamdeck_desk;
GRANT UPDATE (read) ON teamdeck.messages TO teamdeck_agent, teamdeck_desk;
GRANT INSERT (team, subject, description, active_form, status, owner, blocks, blocked_by,
  metadata, create_key) ON teamdeck.tasks TO teamdeck_agent, teamdeck_desk;
GRANT UPDATE (subject, description, active_form, status, owner, blocks, blocked_by, metadata,
  claim_token) ON teamdeck.tasks TO teamdeck_agent, teamdeck_desk;
GRANT DELETE ON teamdeck.tasks TO teamdeck_desk;
GRANT UPDATE (pid, heartbeat, state, machine) ON teamdeck.members TO teamdeck_agent;
GRANT INSERT, UPDATE, DELETE ON teamdeck.members TO teamdeck_desk;
GRANT UPDATE (config) ON teamdeck.teams TO teamdeck_desk;
GRANT INSERT (team, id, requester, kind, body) ON teamdeck.requests TO teamdeck_agent,
  teamdeck_desk;
GRANT UPDATE (answer, answered_by, answered_at) ON teamdeck.requests TO teamdeck_desk;
GRANT SELECT ON teamdeck.events TO teamdeck_desk;
GRANT INSERT (team, actor, kind, body) ON teamdeck.events TO teamdeck_agent, teamdeck_desk;
GRANT USAGE ON SEQUENCE teamdeck.messages_id_seq, teamdeck.requests_n_seq,
  teamdeck.events_id_seq TO teamdeck_agent, teamdeck_desk;

ALTER TABLE teamdeck.identities ENABLE ROW LEVEL SECURITY;
CREATE POLICY own ON teamdeck.identities FOR SELECT USING (role = current_user);

ALTER TABLE teamdeck.teams ENABLE ROW LEVEL SECURITY;
CREATE POLICY read ON teamdeck.teams FOR SELECT USING (name = (SELECT teamdeck.my_team()));
CREATE POLICY desk ON teamdeck.teams FOR UPDATE
  USING (name = (SELECT teamdeck.my_team()) AND (SELECT teamdeck.my_desk()));

ALTER TABLE teamdeck.members ENABLE ROW LEVEL SECURITY;
CREATE POLICY read ON teamdeck.members FOR SELECT USING (team = (SELECT teamdeck.my_team()));
CREATE POLICY self ON teamdeck.members FOR UPDATE
  USING (team = (SELECT teamdeck.my_team())
    AND (name = (SELECT teamdeck.my_member()) OR (SELECT teamdeck.my_desk())))
  WITH CHECK (team = (SELECT teamdeck.my_team())
    AND (name = (SELECT teamdeck.my_member()) OR (SELECT teamdeck.my_desk())));
CREATE POLICY desk_add ON teamdeck.members FOR INSERT
  WITH CHECK (team = (SELECT teamdeck.my_team()) AND (SELECT teamdeck.my_desk()));
CREATE POLICY desk_remove ON teamdeck.members FOR DELETE
  USING (team = (SELECT teamdeck.my_team()) AND (SELECT teamdeck.my_desk()));

ALTER TABLE teamdeck.inboxes ENABLE ROW LEVEL SECURITY;
CREATE POLICY own ON teamdeck.inboxes FOR SELECT
  USING (team = (SELECT teamdeck.my_team())
    AND (name = (SELECT teamdeck.my_member()) OR (SELECT teamdeck.my_desk())));

ALTER TABLE teamdeck.messages ENABLE ROW LEVEL SECURITY;
-- An agent reads its own inbox and what it sent; the desk reads the whole team's.
CREATE POLICY read ON teamdeck.messages FOR SELECT
  USING (team = (SELECT teamdeck.my_team())
    AND (recipient = (SELECT teamdeck.my_member()) OR sender = (SELECT teamdeck.my_member())
      OR (SELECT teamdeck.my_desk())));
-- The sender is the role's own member name (the desk is team-lead, and may write as the
-- person, "user"); the recipient a member of the same team, or the lead or the person.
CREATE POLICY send ON teamdeck.messages FOR INSERT WITH CHECK (
  team = (SELECT teamdeck.my_team())
  AND (sender = (SELECT teamdeck.my_member()) OR (sender = 'user' AND (SELECT teamdeck.my_desk())))
  AND (recipient IN ('team-lead', 'user') OR EXISTS (
    SELECT 1 FROM teamdeck.members m WHERE m.team = messages.team AND m.name = recipient)));
CREATE POLICY mark ON teamdeck.messages FOR UPDATE
  USING (team = (SELECT teamdeck.my_team())
    AND (recipient = (SELECT teamdeck.my_member()) OR (SELECT teamdeck.my_desk())))
  WITH CHECK (team = (SELECT teamdeck.my_team())
    AND (recipient = (SELECT teamdeck.my_member()) OR (SELECT teamdeck.my_desk())));

ALTER TABLE teamdeck.tasks ENABLE ROW LEVEL SECURITY;
CREATE POLICY read ON teamdeck.tasks FOR SELECT USING (team = (SELECT teamdeck.my_team()));
-- An agent creates tasks for nobody or itself; changes only tasks that are nobody's or its
-- own, and leaves them nobody's or its own: it cannot steal a claimed task nor claim one for
-- another. The desk (the lead and the person) assigns freely.
CREATE POLICY add ON teamdeck.tasks FOR INSERT WITH CHECK (team = (SELECT teamdeck.my_team())
  AND ((SELECT teamdeck.my_desk()) OR owner IS NULL OR owner = (SELECT teamdeck.my_member())));
CREATE POLICY change ON teamdeck.tasks FOR UPDATE
  USING (team = (SELECT teamdeck.my_team())
    AND ((SELECT teamdeck.my_desk()) OR owner IS NULL OR owner = (SELECT teamdeck.my_member())))
  WITH CHECK (team = (SELECT teamdeck.my_team())
    AND ((SELECT teamdeck.my_desk()) OR owner IS NULL OR owner = (SELECT teamdeck.my_member())));
CREATE POLICY remove ON teamdeck.tasks FOR DELETE
  USING (team = (SELECT teamdeck.my_team()) AND (SELECT teamdeck.my_desk()));

ALTER TABLE teamdeck.requests ENABLE ROW LEVEL SECURITY;
CREATE POLICY read ON teamdeck.requests FOR SELECT
  USING (team = (SELECT teamdeck.my_team())
    AND (requester = (SELECT teamdeck.my_member()) OR (SELECT teamdeck.my_desk())));
CREATE POLICY ask ON teamdeck.requests FOR INSERT
  WITH CHECK (team = (SELECT teamdeck.my_team())
    AND requester = (SELECT teamdeck.my_member()) AND answer IS NULL);
-- Only the desk answers (the same authority the signed answers give on files).
CREATE POLICY answer ON teamdeck.requests FOR UPDATE
  USING (team = (SELECT teamdeck.my_team()) AND (SELECT teamdeck.my_desk()))
  WITH CHECK (team = (SELECT teamdeck.my_team()) AND (SELECT teamdeck.my_desk()));

ALTER TABLE teamdeck.events ENABLE ROW LEVEL SECURITY;
CREATE POLICY read ON teamdeck.events FOR SELECT
  USING (team = (SELECT teamdeck.my_team()) AND (SELECT teamdeck.my_desk()));
CREATE POLICY add ON teamdeck.events FOR INSERT
  WITH CHECK (team = (SELECT teamdeck.my_team()) AND actor = (SELECT teamdeck.my_member()));
