"""What a machine writes around the error a question pastes: a log line's time stamp, host, process, container and
source line, and a stack trace's frames. The error itself (its code, its message) stays: it is what is asked about.

Read as the question's words, the machine's digits were names the answer must hold ("2026-12-07t10", "laptop-22",
"worker-3", "4411", "sync.go:88", "line 12"), so "how do I fix it?" under such a line was refused.
"""

import re

# A time to the second, with its date or a syslog date before it ("2026-12-07T10:00:01Z", "[10:00:01]", "Dec  7
# 10:00:01"), a syslog line's host and process after it ("laptop-22 nwc-sync[4411]:"), and the stream a container
# runtime writes after it ("2026-12-07T10:00:01.123456789Z stderr F ...", kubectl logs of a node).
_STAMP = (
    r"\[?(?:\d{4}-\d{2}-\d{2}[T ]|(?P<syslog>(?:jan|feb|mar|apr|may|jun|jul|aug|sep|oct|nov|dec)\s+\d{1,2}\s+))?"
    r"\d{2}:\d{2}:\d{2}(?:[.,]\d{1,9})?(?:z|\s?[+-]\d{2}:?\d{2}|\s?utc)?\]?"
    r"(?(syslog)\s+[\w.-]+\s+[\w./-]+(?:\[\d+\])?:|(?:\s+(?:stdout|stderr)\s+[FP](?=\s))?)"
)
# The header of a Kubernetes component's line (klog): severity and date, time, thread id, source file and line
# ("E1207 10:00:01.123456    4411 sync.go:88] ").
_KLOG = r"\b[IWEF]\d{4}\s+\d{2}:\d{2}:\d{2}\.\d{6}\s+\d+\s+[\w.-]+:\d+\]"
# The container a compose stack prefixes to each line of its logs ("worker-3  | ", "app_1 | ").
_CONTAINER = r"(?m:^[\w.-]+[-_]\d+[ \t]+\|(?=[ \t]))"
# A Python traceback's header and the indented frames under it, or a frame line alone; a Java or JavaScript frame
# ("\tat com.acme.Sync.run(Sync.java:42)", "    at sync (/app/sync.js:12:5)") and Java's "... 12 more". The
# exception's own line after them ("nwc.errors.SyncError: E-4412 conflict") is not indented and stays.
_FRAMES = (
    r"(?m:^[ \t]*Traceback \(most recent call last\):[ \t]*(?:\n[ \t]+[^\n]*)*$"
    r'|^[ \t]*File "[^"\n]+", line \d+(?:, in [^\n]*)?$'
    r"|^[ \t]+at [^\n]*(?:\([^()\n]*:\d+(?::\d+)?\)|\((?:native method|unknown source)\))[ \t]*$"
    r"|^[ \t]*\.\.\. \d+ more[ \t]*$)"
)
_MACHINE = re.compile(f"{_KLOG}|{_STAMP}|{_CONTAINER}|{_FRAMES}", re.IGNORECASE)
# What each of those holds, found in ~1 µs where _MACHINE takes ~15 µs on a question with none (every reading of a
# question runs it, several times).
_MAYBE_MACHINE = re.compile(r':|\||File "|\((?:native method|unknown source)\)|\.\.\. \d+ more', re.IGNORECASE)
# The level a logger writes ("2026-12-07 02:00:13,442 ERROR job-runner: E-4501 job exceeded time limit").
_LOG_LEVEL = re.compile(r"\b(?:ERROR|WARN|WARNING|INFO|DEBUG|FATAL|CRITICAL|TRACE)\b")


def without_machine_text(text: str) -> str:
    """`text` without the stamps, hosts, processes, containers, source lines and stack frames a machine wrote around
    the error it pastes; each replaced by a space, so the words either side stay apart."""
    return _MACHINE.sub(" ", text) if _MAYBE_MACHINE.search(text) else text


def is_log_line(text: str) -> bool:
    """Whether `text` is (or holds) a pasted log line or stack frame, which says what happened and asks nothing."""
    return bool(_MAYBE_MACHINE.search(text) and _MACHINE.search(text) or _LOG_LEVEL.search(text))
