-- teamdeck engine, version 5: the lead's machine speaks for the teammates it hosts.
--
-- The desk role (the lead and the person) ran on one machine with teammates of its own: the
-- lead's in-process teammates and its teammate processes. They have no role of their own (only
-- the desk adds a member without one, and nobody logs in as it), so they can run nowhere but on
-- the desk's machine, and their messages to a teammate on a joined machine go out on the desk's
-- link. The desk may now send as such a member, and as no one else: not as a member with a role
-- of its own (a joined machine's teammate speaks for itself), not as a member placed on another
-- machine, not as a name that is no member of the team. An agent's role still sends as itself
-- only.

-- Whether the team's member p_member runs on the desk's machine: a member of p_team, neither
-- the lead nor the person, not placed on a joined machine, and with no role of its own.
-- SECURITY DEFINER: a role sees only its own row of teamdeck.identities.
CREATE FUNCTION teamdeck.desk_hosts(p_team text, p_member text) RETURNS boolean
LANGUAGE sql STABLE SECURITY DEFINER SET search_path = pg_catalog, teamdeck AS $$
  SELECT p_member NOT IN ('team-lead', 'user')
    AND EXISTS (SELECT 1 FROM teamdeck.members m WHERE m.team = p_team AND m.name = p_member
                  AND NOT coalesce(m.data ? 'teamdeckPlacedOn', false))
    AND NOT EXISTS (SELECT 1 FROM teamdeck.identities i WHERE i.team = p_team
                      AND i.member = p_member AND NOT i.desk)
$$;
REVOKE ALL ON FUNCTION teamdeck.desk_hosts(text, text) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION teamdeck.desk_hosts(text, text) TO teamdeck_agent, teamdeck_desk;

-- The sender is the role's own member name; the desk's may also be the person ("user") or a
-- teammate its machine hosts (checked last: an agent's own sends never reach the call). The
-- same rule for a send made through teamdeck.send (version 4), and for a direct INSERT.
CREATE OR REPLACE FUNCTION teamdeck.may_send_as(me teamdeck.identities, p_team text,
                                                p_sender text)
RETURNS boolean LANGUAGE sql STABLE AS $$
  SELECT me.member IS NULL OR p_sender = me.member
    OR (me.desk AND (p_sender = 'user' OR teamdeck.desk_hosts(p_team, p_sender)))
$$;

ALTER POLICY send ON teamdeck.messages WITH CHECK (
  team = (SELECT teamdeck.my_team())
  AND (sender = (SELECT teamdeck.my_member())
    OR ((SELECT teamdeck.my_desk()) AND (sender = 'user' OR teamdeck.desk_hosts(team, sender))))
  AND (recipient IN ('team-lead', 'user') OR EXISTS (
    SELECT 1 FROM teamdeck.members m WHERE m.team = messages.team AND m.name = recipient)));
