PRAGMA foreign_keys=OFF;
BEGIN TRANSACTION;
CREATE TABLE students (
    id TEXT PRIMARY KEY, name TEXT NOT NULL, email TEXT NOT NULL, grp TEXT NOT NULL DEFAULT '',
    in_roster INTEGER NOT NULL DEFAULT 1, disabled INTEGER NOT NULL DEFAULT 0, chosen_id INTEGER);
INSERT INTO students VALUES('s1','Ada Lovelace','ada@example.org','A',1,0,NULL);
INSERT INTO students VALUES('s2','Alan Turing','alan@example.org','A',1,0,NULL);
INSERT INTO students VALUES('s3','Grace Hopper','grace@example.org','B',1,0,NULL);
CREATE TABLE submissions (
    id INTEGER PRIMARY KEY AUTOINCREMENT, student_id TEXT NOT NULL REFERENCES students(id),
    version INTEGER NOT NULL, filename TEXT NOT NULL, protocol TEXT NOT NULL, kind TEXT NOT NULL,
    sha256 TEXT NOT NULL, size INTEGER NOT NULL, created TEXT NOT NULL, status TEXT NOT NULL,
    reason TEXT, detail TEXT, command TEXT, finished TEXT, UNIQUE (student_id, version));
INSERT INTO submissions VALUES(1,'s1',1,'bot.py','v1','python','4fd29d59014d92feb8a2d216a774e2e8d16ff5c7d746e7cd6a8670192355afaa',15,'2026-12-01T09:00:00Z','qualified',NULL,NULL,'/work/wt/house/.venv/bin/python -m bots random','2026-11-28T02:57:02Z');
INSERT INTO submissions VALUES(2,'s2',1,'bot.py','v1','python','7f592d02125d118ea3e950383bfeb6ac9b86956a55e0b2871cb692dfc520104d',15,'2026-12-01T09:01:00Z','qualified',NULL,NULL,'/work/wt/house/.venv/bin/python -m bots greedy','2026-11-28T02:57:02Z');
INSERT INTO submissions VALUES(3,'s3',1,'bot.py','v1','python','66ff7359fcf03eda48643dc224a223cfc24d1d1e039103fe8e88b41d0788407f',13,'2026-12-01T09:02:00Z','failed','build','SyntaxError: invalid syntax',NULL,'2026-11-28T02:57:02Z');
INSERT INTO submissions VALUES(4,'s3',2,'bot.py','v1','python','5550e67fd7020a825a92e4c164fcd8398c8908642570950c5e4a26cd0b1dcdf2',15,'2026-12-01T09:03:00Z','queued',NULL,NULL,NULL,NULL);
CREATE TABLE jobs (
    submission_id INTEGER PRIMARY KEY REFERENCES submissions(id), state TEXT NOT NULL,
    attempts INTEGER NOT NULL DEFAULT 0, enqueued TEXT NOT NULL, started TEXT);
INSERT INTO jobs VALUES(4,'queued',0,'2026-12-01T09:03:00Z',NULL);
CREATE TABLE build_logs (submission_id INTEGER PRIMARY KEY REFERENCES submissions(id),
    text TEXT NOT NULL);
CREATE TABLE games (submission_id INTEGER NOT NULL REFERENCES submissions(id),
    number INTEGER NOT NULL, record TEXT NOT NULL, PRIMARY KEY (submission_id, number));
CREATE TABLE reports (submission_id INTEGER PRIMARY KEY REFERENCES submissions(id),
    filename TEXT NOT NULL, sha256 TEXT NOT NULL, size INTEGER NOT NULL);
CREATE TABLE phase_checks (submission_id INTEGER NOT NULL REFERENCES submissions(id),
    requirement TEXT NOT NULL, passed INTEGER NOT NULL, evidence TEXT NOT NULL, game_ids TEXT NOT NULL,
    disagreements TEXT NOT NULL, value REAL, checked TEXT NOT NULL, PRIMARY KEY (submission_id, requirement));
CREATE TABLE phase_games (game_id TEXT PRIMARY KEY, submission_id INTEGER NOT NULL
    REFERENCES submissions(id), record TEXT NOT NULL);
CREATE TABLE ladder_players (
    key TEXT PRIMARY KEY,           -- "v<submission id>" (a student's version) or "ref:<bot name>"
    name TEXT NOT NULL UNIQUE,      -- the bot's name in games: "<student id>-v<version>" or the bot's
    student_id TEXT,                -- NULL for a reference bot
    submission_id INTEGER,
    mu REAL NOT NULL, sigma REAL NOT NULL,
    games INTEGER NOT NULL DEFAULT 0,   -- rated games played
    created TEXT NOT NULL           -- when the ladder first saw it (ISO 8601 UTC)
);
INSERT INTO ladder_players VALUES('ref:random','random',NULL,NULL,25.728286054842762098,7.3934893230108755801,4,'2026-12-01T09:05:00Z');
INSERT INTO ladder_players VALUES('ref:greedy','greedy',NULL,NULL,25.0,8.3333333333333339254,0,'2026-12-01T09:05:00Z');
INSERT INTO ladder_players VALUES('ref:alphabeta','alphabeta',NULL,NULL,25.0,8.3333333333333339254,0,'2026-12-01T09:05:00Z');
INSERT INTO ladder_players VALUES('v1','s1-v1','s1',1,24.58869080736762669,7.8228871928811098968,2,'2026-12-01T09:05:00Z');
INSERT INTO ladder_players VALUES('v2','s2-v1','s2',2,24.67898266371362581,7.7851439897490353203,2,'2026-12-01T09:05:00Z');
CREATE TABLE ladder_games (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    a TEXT NOT NULL REFERENCES ladder_players(key), b TEXT NOT NULL REFERENCES ladder_players(key),
    rated INTEGER NOT NULL,
    requested_by TEXT,              -- the student who asked for this unrated game
    created TEXT NOT NULL,
    state TEXT NOT NULL,            -- queued (asked for), scheduled (handed out by due), done, errored
    detail TEXT NOT NULL DEFAULT '',
    finished TEXT
);
INSERT INTO ladder_games VALUES(1,'v1','ref:random',1,NULL,'2026-12-01T09:05:00Z','done','','2026-12-01T09:06:00Z');
INSERT INTO ladder_games VALUES(2,'v2','ref:random',1,NULL,'2026-12-01T09:05:00Z','done','','2026-12-01T09:06:00Z');
CREATE TABLE ladder_records (
    game_id TEXT PRIMARY KEY, ladder_id INTEGER NOT NULL REFERENCES ladder_games(id),
    at TEXT NOT NULL, record TEXT NOT NULL);
INSERT INTO ladder_records VALUES('ladder-1-g0',1,'2026-12-01T09:06:00Z','{"aborted": null, "clock": "wall", "duration_s": 0.0, "errors": [0, 0], "forfeit": null, "game": "domineering", "game_id": "ladder-1-g0", "isolation": "", "loaded_moves": 0, "logs": {}, "moves": [], "params": {"cols": 4, "first": "vertical", "rows": 4}, "players": ["s1-v1", "random"], "reason": "no moves", "scores": [1, 0], "start_moves": [], "started_at": "", "time_control": "0.2", "winner": 0}');
INSERT INTO ladder_records VALUES('ladder-1-g1',1,'2026-12-01T09:06:00Z','{"aborted": null, "clock": "wall", "duration_s": 0.0, "errors": [0, 0], "forfeit": null, "game": "domineering", "game_id": "ladder-1-g1", "isolation": "", "loaded_moves": 0, "logs": {}, "moves": [], "params": {"cols": 4, "first": "vertical", "rows": 4}, "players": ["random", "s1-v1"], "reason": "no moves", "scores": [1, 0], "start_moves": [], "started_at": "", "time_control": "0.2", "winner": 0}');
INSERT INTO ladder_records VALUES('ladder-2-g0',2,'2026-12-01T09:06:00Z','{"aborted": null, "clock": "wall", "duration_s": 0.0, "errors": [0, 0], "forfeit": null, "game": "domineering", "game_id": "ladder-2-g0", "isolation": "", "loaded_moves": 0, "logs": {}, "moves": [], "params": {"cols": 4, "first": "vertical", "rows": 4}, "players": ["s2-v1", "random"], "reason": "no moves", "scores": [1, 0], "start_moves": [], "started_at": "", "time_control": "0.2", "winner": 0}');
INSERT INTO ladder_records VALUES('ladder-2-g1',2,'2026-12-01T09:06:00Z','{"aborted": null, "clock": "wall", "duration_s": 0.0, "errors": [0, 0], "forfeit": null, "game": "domineering", "game_id": "ladder-2-g1", "isolation": "", "loaded_moves": 0, "logs": {}, "moves": [], "params": {"cols": 4, "first": "vertical", "rows": 4}, "players": ["random", "s2-v1"], "reason": "no moves", "scores": [1, 0], "start_moves": [], "started_at": "", "time_control": "0.2", "winner": 0}');
CREATE TABLE ladder_history (
    id INTEGER PRIMARY KEY AUTOINCREMENT, key TEXT NOT NULL REFERENCES ladder_players(key),
    at TEXT NOT NULL, game_id TEXT NOT NULL,
    mu REAL NOT NULL, sigma REAL NOT NULL);
INSERT INTO ladder_history VALUES(1,'v1','2026-12-01T09:06:00Z','ladder-1-g0',27.635389493140497308,8.06590141354367951);
INSERT INTO ladder_history VALUES(2,'ref:random','2026-12-01T09:06:00Z','ladder-1-g0',22.364610506859502691,8.06590141354367951);
INSERT INTO ladder_history VALUES(3,'ref:random','2026-12-01T09:06:00Z','ladder-1-g1',25.411309192632373309,7.8228871928811098968);
INSERT INTO ladder_history VALUES(4,'v1','2026-12-01T09:06:00Z','ladder-1-g1',24.58869080736762669,7.8228871928811098968);
INSERT INTO ladder_history VALUES(5,'v2','2026-12-01T09:06:00Z','ladder-2-g0',27.743478537900372771,8.0453304394912183994);
INSERT INTO ladder_history VALUES(6,'ref:random','2026-12-01T09:06:00Z','ladder-2-g0',22.993600085360355934,7.6000296614532194539);
INSERT INTO ladder_history VALUES(7,'ref:random','2026-12-01T09:06:00Z','ladder-2-g1',25.728286054842762098,7.3934893230108755801);
INSERT INTO ladder_history VALUES(8,'v2','2026-12-01T09:06:00Z','ladder-2-g1',24.67898266371362581,7.7851439897490353203);
CREATE TABLE accounts (
    id TEXT PRIMARY KEY,            -- a roster id (student) or a staff name
    role TEXT NOT NULL CHECK (role IN ('student', 'staff')),
    password TEXT,                  -- argon2id hash; NULL until set through a sign-in link
    invite TEXT UNIQUE,             -- SHA-256 of the pending one-time sign-in link's secret
    token TEXT UNIQUE,              -- SHA-256 of the API token
    generation INTEGER NOT NULL DEFAULT 0,  -- bumped on a new password: older sessions end
    created TEXT NOT NULL
);
INSERT INTO accounts VALUES('s1','student',NULL,'6f083b97ad6a356e01a3813d0bd8fe2bf9dfb9c3da2d893d04b62da17a67eed5',NULL,0,'2026-11-28T02:57:02+00:00');
INSERT INTO accounts VALUES('prof','staff',NULL,'e8b52d50cf36c59873470b836246fc8f1cf8fe4fdf5f181f04a02847a34a5e3c',NULL,0,'2026-11-28T02:57:02+00:00');
INSERT INTO accounts VALUES('s2','student','$argon2id$v=19$m=65536,t=3,p=4$qnFsiSxUEoCifwi4NTxvpQ$PbfaJd8ga68Ep+RcSNeS0jZklYa7F95vvbQ3JUfVdw0',NULL,NULL,1,'2026-11-28T02:57:02+00:00');
CREATE TABLE sessions (
    id TEXT PRIMARY KEY,            -- SHA-256 of the session's secret (the cookie carries the secret)
    account_id TEXT NOT NULL,
    created TEXT NOT NULL,          -- ISO 8601, UTC
    expires REAL NOT NULL           -- Unix time after which the session is over
);
CREATE TABLE audit_log (
    id INTEGER PRIMARY KEY,
    at TEXT NOT NULL,               -- ISO 8601, UTC
    actor TEXT NOT NULL,            -- a staff name, or "(terminal)" for `arena course ...` commands
    action TEXT NOT NULL,
    target TEXT NOT NULL DEFAULT '',
    detail TEXT NOT NULL DEFAULT ''
);
INSERT INTO audit_log VALUES(1,'2026-11-28T02:57:02+00:00','(terminal)','staff added','prof','');
INSERT INTO audit_log VALUES(2,'2026-11-28T02:57:02+00:00','prof','disable','s3','test');
CREATE TABLE privacy_secret (id INTEGER PRIMARY KEY CHECK (id = 1), secret TEXT NOT NULL);
INSERT INTO privacy_secret VALUES(1,'5d2720f9e6b984d189cb574015981806');
CREATE TABLE pseudonyms (student_id TEXT PRIMARY KEY, name TEXT NOT NULL UNIQUE);
INSERT INTO pseudonyms VALUES('s1','eager-gecko');
INSERT INTO pseudonyms VALUES('s2','lunar-cat');
CREATE TABLE final_runs (run INTEGER PRIMARY KEY, started TEXT NOT NULL, finished TEXT,
    published TEXT);
INSERT INTO final_runs VALUES(1,'2026-11-28T02:57:02Z','2026-11-28T02:57:02Z',NULL);
CREATE TABLE final_entrants (run INTEGER NOT NULL REFERENCES final_runs(run),
    student_id TEXT NOT NULL, submission_id INTEGER NOT NULL, bot TEXT NOT NULL, command TEXT NOT NULL,
    PRIMARY KEY (run, student_id));
INSERT INTO final_entrants VALUES(1,'s1',1,'eager-gecko','/work/wt/house/.venv/bin/python -m bots random');
INSERT INTO final_entrants VALUES(1,'s2',2,'lunar-cat','/work/wt/house/.venv/bin/python -m bots greedy');
DELETE FROM sqlite_sequence;
INSERT INTO sqlite_sequence VALUES('submissions',4);
INSERT INTO sqlite_sequence VALUES('ladder_games',2);
INSERT INTO sqlite_sequence VALUES('ladder_history',8);
CREATE INDEX submissions_by_student ON submissions (student_id, id);
CREATE INDEX ladder_games_by_state ON ladder_games (state, id);
CREATE INDEX ladder_history_by_key ON ladder_history (key, id);
CREATE INDEX sessions_by_account ON sessions (account_id);
COMMIT;
