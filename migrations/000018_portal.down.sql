DROP TABLE IF EXISTS portal_sessions;
DROP TABLE IF EXISTS portal_links;
