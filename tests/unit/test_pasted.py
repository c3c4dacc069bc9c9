from shared.chatter import without_chatter
from shared.pasted import is_log_line, without_machine_text
from shared.questions import separate_questions
from shared.text import question_terms


def test_a_container_s_prefix_a_runtime_s_stream_and_a_klog_header_are_the_machine_s():
    """Found by use (the demo mesh): "how do I fix it?" under each of these lines was refused, the machine's digits
    ("worker-3", "sync-1", "e1207", "4411", "88") read as names the answer must hold; all answered now."""
    assert (
        without_machine_text("worker-3  | ERROR sync: E-4412 conflict").split() == "ERROR sync: E-4412 conflict".split()
    )
    assert without_machine_text("sync-1  | 2026-12-07 10:00:01 ERROR E-4412").split() == ["ERROR", "E-4412"]
    assert without_machine_text("2026-12-07T10:00:01.123456789Z stderr F ERROR E-4412").split() == ["ERROR", "E-4412"]
    assert without_machine_text("E1207 10:00:01.123456    4411 sync.go:88] E-4412 conflict").split() == [
        "E-4412",
        "conflict",
    ]


def test_a_stack_trace_s_frames_are_the_machine_s_and_its_exception_stays():
    python = (
        'Traceback (most recent call last):\n  File "sync.py", line 12, in <module>\n    client.sync()\n'
        "nwc.errors.SyncError: E-4412 conflict\nhow do I fix this?"
    )
    assert without_chatter(python) == "nwc.errors.SyncError: E-4412 conflict\nhow do I fix this?"
    java = (
        "com.acme.SyncException: E-4412 conflict\n\tat com.acme.Sync.run(Sync.java:42)\n"
        "\tat java.base/java.lang.Thread.run(Unknown Source)\n\t... 12 more\nwhat does it mean?"
    )
    assert question_terms(without_chatter(java)) == {"com.acme.syncexception", "e-4412", "conflict", "mean"}
    node = "TypeError: E-1001 invalid api key\n    at sync (/app/sync.js:12:5)\nwhy?"
    assert question_terms(without_chatter(node)) == {"typeerror", "e-1001", "invalid", "api", "key"}
    assert separate_questions(python) == [python]


def test_what_only_looks_like_a_machine_s_is_the_question_s():
    for question in (
        "what is at the top of the page (page 2)",
        'what does "File" mean in the CLI, line 12 of the docs',
        "is the 02:00 UTC maintenance window moving",
        "team-1 vs team-2 pricing",
        "which error does E1207 raise",
    ):
        assert without_machine_text(question) == question
        assert not is_log_line(question)
    assert is_log_line("2026-12-07 02:00:13,442 ERROR job-runner: E-4501 job exceeded time limit")
    assert is_log_line("worker-3  | started")
