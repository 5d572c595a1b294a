// Appends messages to an inbox exactly as Claude Code's writeToMailbox does (proper-lockfile).
//
// usage: node node_lock_writer.js MODULES_DIR INBOX SENDER COUNT [GO_FILE]
//
// MODULES_DIR is the node_modules directory holding proper-lockfile. When GO_FILE is given,
// the writer waits until it exists, so all writers start together. Each message's text is
// `${SENDER}-${i}`. lockSync has no retries, so ELOCKED is retried after a short sleep, as a
// Claude Code caller's own retry would.
"use strict";

const fs = require("fs");
const path = require("path");

const [modulesDir, inboxPath, sender, countArg, goFile] = process.argv.slice(2);
const lockfile = require(path.join(modulesDir, "proper-lockfile"));
const count = Number(countArg);
const sleeper = new Int32Array(new SharedArrayBuffer(4));

function sleep(ms) {
  Atomics.wait(sleeper, 0, 0, ms);
}

function lockWithRetry(deadlineMs) {
  for (;;) {
    try {
      return lockfile.lockSync(inboxPath, { lockfilePath: inboxPath + ".lock" });
    } catch (err) {
      if (err.code !== "ELOCKED" || Date.now() > deadlineMs) throw err;
      sleep(1 + Math.random() * 2);
    }
  }
}

if (goFile) {
  while (!fs.existsSync(goFile)) sleep(1);
}

const deadline = Date.now() + 60000;
for (let i = 0; i < count; i++) {
  // Claude Code creates a missing inbox as "[]" before locking (proper-lockfile resolves the
  // file's realpath, so it must exist). Its plain existsSync/writeFileSync pair can clobber an
  // inbox another process creates in between; "wx" keeps that race out of this test.
  try {
    fs.writeFileSync(inboxPath, "[]", { encoding: "utf-8", flag: "wx" });
  } catch (err) {
    if (err.code !== "EEXIST") throw err;
  }
  const unlock = lockWithRetry(deadline);
  try {
    const messages = JSON.parse(fs.readFileSync(inboxPath, "utf-8"));
    messages.push({
      from: sender,
      text: `${sender}-${i}`,
      timestamp: new Date().toISOString(),
      read: false,
    });
    fs.writeFileSync(inboxPath, JSON.stringify(messages, null, 2), "utf-8");
  } finally {
    unlock();
  }
}
