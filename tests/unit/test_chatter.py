from shared.chatter import only_chatter, without_chatter
from shared.text import question_terms


def test_a_greeting_a_sign_off_and_phrases_of_asking_are_not_the_question():
    """Found by use: "Hello, could you please let me know how long invoices are retained? Thanks!" was refused at
    coverage 0.27 ("hello", "thanks" held by no passage), and "Good morning. I would like to know the per diem for
    international travel. Regards, Sam" refused by the generator ("sam" the rarest word asked)."""
    assert without_chatter("Hello, could you please let me know how long invoices are retained? Thanks!") == (
        "how long invoices are retained?"
    )
    assert without_chatter(
        "Good morning. I would like to know the per diem for international travel. Regards, Sam"
    ) == ("the per diem for international travel")
    assert without_chatter("hi there! quick question: what's the hotel cap in london?") == (
        "what's the hotel cap in london?"
    )
    assert without_chatter("Hey team, is there a fee for paypal refunds? thanks in advance") == (
        "is there a fee for paypal refunds?"
    )
    assert without_chatter("sorry if this is obvious but how long are application logs kept") == (
        "how long are application logs kept"
    )
    assert without_chatter("urgent!!! api returns E-2410 what now") == "api returns E-2410 what now"


def test_the_same_words_inside_a_question_stay():
    for question in (
        "which plan is best",  # "best" closes it, as no sign-off
        "is the best regards policy written down",
        "urgent incident severity",  # "urgent" as a word of the question, not a cry
        "how do i say thank you to support",
        "who is the best contact for refunds",
        "can invoices be sent from my phone",  # a mail client's signature only closing the message
        "what was sent with the invoice",
        "report to security@northwindcloud.example?",  # an address, no mention
        "what is #sec-incident for",
        "refund window (annual plan)",
        "follow-up call cost?",  # a word of the question, not a conversation's "follow up: ..."
        "well-known ports list",
        "can someone help me reset my password?",
        "is the feature new here?",
        "yoga classes covered?",
        "is Merci a customer",
        "msa clause 7.2 meaning",  # no list's marker
        "1 hour response time?",
        "is the sorry state of billing documented",
        "what does cc mean on an invoice",
        "Replacement of histone H2A with H2A.Z accelerates gene activation by destabilizing +1 nucleosomes.",
        "is UTC+1 supported",
        "ideas for the offsite budget",
        "what do you know about legal hold",
        "what does the customer question form ask",
        "what does __init__ do",
        "does the no rush fee apply",
    ):
        assert without_chatter(question) == question
    # A question that is all chatter is read as written: nothing else would be left.
    assert without_chatter("thanks!") == "thanks!"
    assert without_chatter("hello") == "hello"


def test_a_claim_put_up_to_be_checked_is_asked_without_its_frame():
    """Found by use: "i heard business class needs VP approval, correct?" (coverage 0.53) and "someone told me
    weekly backups are kept for a year, is that right?" (0.53) counted "heard", "correct", "told" and "right" as
    words the answer must hold. What is left is still asked yes or no."""
    assert without_chatter("i heard business class needs VP approval, correct?") == "business class needs VP approval?"
    assert without_chatter("someone told me weekly backups are kept for a year, is that right?") == (
        "weekly backups are kept for a year?"
    )
    assert without_chatter("is it true that consumers get 30 days for a refund") == (
        "consumers get 30 days for a refund?"
    )
    assert without_chatter("am i right that the hotel cap in london is 350") == "the hotel cap in london is 350?"
    assert without_chatter("the hotel cap in london is 350, or am I wrong?") == "the hotel cap in london is 350?"
    # The words asked about, not a frame: kept.
    for question in ("is the refund window correct?", "which is correct?", "what is the right plan for me"):
        assert without_chatter(question) == question
    assert (
        without_chatter("i read the refund policy, where do i submit?")
        == "i read the refund policy, where do i submit?"
    )


def test_a_label_a_please_and_exclamation_marks_around_a_question_go():
    """Found by asking the recorded train+dev questions through templates (`replay --wrap`): "please, {question}"
    turned 3 right answers wrong ("please, what is a P1" was no longer read as asking what a P1 is), "{question}
    asap" and "help: {question}" refused about 50 more, and "scim on starter?!!" was no longer a yes/no question."""
    assert without_chatter("please, what is a P1") == "what is a P1"
    assert without_chatter("I need to know what is a P1") == "what is a P1"
    assert without_chatter("question: do P3s need a PIR") == "do P3s need a PIR"
    assert without_chatter("help: E-2410") == "E-2410"
    assert without_chatter("what is a P1 pls") == "what is a P1"
    assert without_chatter("what is a P1 asap") == "what is a P1"
    assert without_chatter("scim on starter?!!") == "scim on starter?"
    assert without_chatter("please") == "please"  # nothing else to read


TEMPLATES = (
    "hi there! quick question: {question}",
    "{question} thanks in advance",
    "Good morning. {question} Regards, Sam",
    "sorry if this is obvious but {question}",
    "please, {question}",
    "I need to know {question}",
    "help: {question}",
    "{question} asap",
    "Hey team, can you tell me {question}? Many thanks!",
    "briefly, {question}",
    "{question} (short answer please)",
    "according to the docs, {question}",
    "quick one: {question} ty",
    "{question}\n\nSent from my iPhone",
    "Hi,\n{question}\nThanks,\nAna\n\nGet Outlook for Android",
    "Re: FW: {question}",
    "#help {question} @support",
    "{question} (asking for a friend)",
    "So, {question}",
    "ok so btw {question}",
    "Can someone help? {question}",
    "anyone know {question}",
    "Question for HR: {question}",
    "one more thing - {question}",
    "Hi! New here. {question}",
    "Hola! {question} Gracias",
    "Dear Support Team, {question} Kind regards, Max Mustermann",
    "Greetings from Berlin! {question} Thank you very much!",
    "yo {question} TIA",
    "1) {question}",
    "(2) {question}",
    "Q3: {question}",
    "[URGENT] Sorry to bother you, {question} Any help appreciated!",
    "Hope you are well. Not sure who to ask, {question} (sorry for the dumb question) cc @finance",
    # What mail and chat clients add around the asker's words (shared.mail).
    "{question}\n\n> On Mon, 7 Dec 2026, Sam wrote:\n> Please send the figures for the audit.",
    "{question}\n\n-----Original Message-----\nFrom: Sam Lee\nSent: Monday, December 7, 2026\nSubject: audit\n\n"
    "Please send the figures.",
    "{question}\n\n--\nDana Smith\nFinance Manager | Acme Corp\n+1 555 0100",
    "Hi,\n\n{question}\n\nBest regards,\nDana Smith\nAcme Corp | Finance\nT: +44 20 7946 0000\nwww.acme.example",
    "{question}\n\nCONFIDENTIALITY NOTICE: This e-mail and any attachments are confidential and intended solely "
    "for the addressee.",
    "[EXTERNAL] {question}\n\nThis email was sent from an external sender. Do not click links unless you trust "
    "the sender.",
    "Re: audit figures\n\n{question}",
    "Good afternoon team,\n\nI hope you're all doing well.\n\n{question}\n\nLooking forward to your reply.\n\n"
    "Kind regards,\nDana",
    "Dear Sir or Madam, {question} Yours faithfully, Dana Smith",
    "Hi Support Team, {question} Many thanks in advance for your help.",
    "<p>{question}</p>",
    "{question}&nbsp;",
    "**{question}**",
    "_{question}_",
    'From a customer: "{question}"',
    "Customer asks: {question}",
    "/ask {question} :pray:",
    "{question} (edited) [sent via Slack] /cc @dana",
    "bump: {question} +1",
    "I was wondering {question}? (no rush)",
    "do you know {question}, if you know",
    "{question} - any idea?",
    "{question}? any pointers appreciated",
    "Apologies for the long message. {question} Let me know if you need more info.",
    "Sorry, one more question: {question} Thanks a bunch",
    "{question} (for the Q3 report) EOM",
    "{question} (asked in #support) Appreciate it!",
    "{question} - sent from mobile, sorry for typos",
    "IIRC, {question}",
    # Speech as dictation writes it down.
    "um so {question} you know",
    "I mean, uh, {question}, you know?",
)


def test_every_labelled_train_and_dev_question_is_read_back_from_around_it():
    """The property the generator and the gateway rely on: wrapped in a greeting, a sign-off or a phrase of asking,
    each of the sample set's train and dev questions reads as itself (up to a closing question mark), so it is
    answered as when asked plainly; and nothing of an unwrapped question is taken for chatter."""
    from services.evaluation.cases import load_cases

    questions = [c.question for c in load_cases("eval/cases/sample.jsonl", ["examples"]) if c.split in ("train", "dev")]
    assert len(questions) > 300
    for question in questions:
        assert without_chatter(question) in (question, question.rstrip("?!") + "?", question.rstrip("?!"))
        for template in TEMPLATES:
            read = without_chatter(template.format(question=question))
            assert read.rstrip("?") == question.rstrip("?"), (template, question, read)


def test_asking_for_a_short_answer_or_naming_the_docs_is_not_the_question():
    """Found with replay --wrap: "briefly, {question}", "{question} (short answer please)", "according to the docs,
    {question}" and "{question} ty" left 120-157 of the 253 answerable train+dev questions right (207 plainly)."""
    assert without_chatter("what is a P1, in short") == "what is a P1"
    assert without_chatter("what is a P1 (short answer please)") == "what is a P1"
    assert without_chatter("per the handbook, what is a P1") == "what is a P1"
    assert without_chatter("what is a P1 ty") == "what is a P1"
    for question in ("in short supply", "per diem for tokyo", "based on the policy what is x"):
        assert without_chatter(question) == question


def test_the_verb_of_a_request_is_not_a_question_word():
    """Found by use: "give me the hotel caps" (coverage 0.63), "show me the webhook limits" (0.54) and "summarize the
    refund policy for consumers" (0.61) were refused, no unit holding "give", "show" or "summarize"."""
    assert question_terms(without_chatter("give me the hotel caps")) == {"hotel", "cap"}
    assert question_terms(without_chatter("can you explain the approval limits")) == {"approve", "limit"}
    assert question_terms(without_chatter("summarize the refund policy for consumers")) == {
        "refund",
        "policy",
        "consumer",
    }
    assert question_terms(without_chatter("walk me through the refund process")) == {"refund", "process"}
    # Not a verb of the question itself, nor one the question asks about.
    assert "give" in question_terms(without_chatter("give 20% off who approves"))
    assert "show" in question_terms(without_chatter("does the dashboard show W-2204"))
    assert "show" in question_terms(without_chatter("show me where the dashboard will show W-2204"))


def test_a_frame_asking_what_is_known_about_a_thing_is_not_a_question_word():
    """Found by use: "any info about the competitive switch offer" (coverage 0.47) and "what's the deal with weekly
    backups" (0.57) were refused, no unit holding "info" or "deal"."""
    assert question_terms(without_chatter("any info about the competitive switch offer")) == {
        "competitive",
        "switch",
        "offer",
    }
    assert question_terms(without_chatter("what's the deal with weekly backups")) == {"week", "backup"}
    assert question_terms(without_chatter("details of the startup program")) == {"startup", "program"}
    # The same nouns outside the frame are the question's, and only the question's opening is a frame: a SciFact
    # claim ("... provide information for targeted therapy") states it.
    assert "detail" in question_terms(without_chatter("what details must a pir include"))
    assert "deal" in question_terms(without_chatter("discount deal for enterprise"))
    claim = "Genomic aberrations of metastases provide information for targeted therapy."
    assert without_chatter(claim) == claim


def test_the_markers_of_a_list_of_questions_are_not_the_question():
    """Asked as "1) {question}", the train/dev questions were answered right 25 times of 253 (41 wrong): the "1"
    was read as a number the answer must hold. Markers inside a message part its questions."""
    assert without_chatter("1) how long are invoices kept? 2) who approves refunds") == (
        "how long are invoices kept? ; who approves refunds"
    )
    assert without_chatter("1. invoices\n2. refunds") == "invoices\n; refunds"


def test_saying_how_many_questions_follow_is_not_the_question():
    """ "Two questions: who approves travel over 5000, and what is the p1 response time?" was refused (top score
    0.698): "two" and "question" were read as words the answer must hold."""
    assert without_chatter("Two questions: who approves travel over 5000, and what is the p1 response time?") == (
        "who approves travel over 5000, and what is the p1 response time?"
    )
    assert without_chatter("I have a couple of quick questions. hotel cap nyc") == "hotel cap nyc"
    assert without_chatter("two factor login for admins") == "two factor login for admins"


def test_a_line_of_nothing_but_chatter_is_told_from_a_question():
    for line in ("Hi team, two questions:", "Thanks, Sam", "Sent from my iPhone", "Kind regards, Max Mustermann"):
        assert only_chatter(line), line
    for line in ("hotel cap nyc", "thanks to the new policy, who approves refunds?", "2) refund window"):
        assert not only_chatter(line), line


def test_the_form_an_answer_is_asked_in_is_not_the_question():
    """Read as question words, "ELI5: {question}" answered none of the 253 answerable train/dev questions right (the
    replay; "eli5" held as a name), "answer in one sentence: {question}" 102, "{question} (tl;dr please)" 144 (207
    asked plainly); each now 207."""
    for asked in (
        "tl;dr: how long are invoices kept",
        "ELI5: how long are invoices kept",
        "answer in one sentence: how long are invoices kept",
        "in bullet points, how long are invoices kept",
        "how long are invoices kept (tl;dr please)",
        "how long are invoices kept - one sentence please",
        "how long are invoices kept? keep it short",
    ):
        assert without_chatter(asked).rstrip("?") == "how long are invoices kept", asked
    assert without_chatter("is sso on starter, yes or no?") == "is sso on starter"
    # Not where the words are the question's own.
    for asked in ("which plans are in the list", "items in short supply", "refund window in a few words"):
        assert without_chatter(asked) == asked


def test_laughter_and_chat_shorthand_are_not_the_question():
    """ "{question} lol" was answered right 156 times of 253 in the replay, "{question} haha" 155; now 207."""
    assert without_chatter("how long are invoices kept lol") == "how long are invoices kept"
    assert without_chatter("haha ok so how long are invoices kept? idk") == "how long are invoices kept?"
    assert without_chatter("Lolly pop stipend") == "Lolly pop stipend"


def test_what_speech_puts_between_the_words_is_not_the_question():
    """Dictated questions: "uh" and "er" were read as words the answer must hold and "you know" as asking about
    knowing (replay of train+dev with "uh" before the first "the": 202 of 253 right, with "you know" after each
    question 205 and one more wrong; 207 asked plainly)."""
    assert without_chatter("which release uh made the timeout configurable") == (
        "which release made the timeout configurable"
    )
    assert without_chatter("what is, like, a P1, erm, for us") == "what is a P1, for us"
    assert without_chatter("Uhm, what is a P1 you know") == "what is a P1"
    # The same letters as words of their own stay: a unit, an abbreviation, knowing asked about.
    assert without_chatter("ER stress in beta cells") == "ER stress in beta cells"
    assert without_chatter("particles under 10 um") == "particles under 10 um"
    assert without_chatter("umbrella insurance for the hummer") == "umbrella insurance for the hummer"
    assert question_terms(without_chatter("what else do you know")) == {"else"}
    assert without_chatter("what do customers like") == "what do customers like"


def test_a_mail_opening_and_closing_are_not_the_question():
    mail = (
        "Hi, I hope this finds you well. How long are invoices kept? We need this for an audit next month. Best, Dana"
    )
    assert without_chatter(mail) == "How long are invoices kept? We need this for an audit next month."
    assert without_chatter("which plan is best") == "which plan is best"
    assert without_chatter("what plan is best for us? Best, Dana") == "what plan is best for us?"


def test_now_said_of_a_question_about_now_is_not_the_question():
    """In the replay, "{question} right now" answered 121 of the 253 answerable train/dev questions right,
    "{question} currently" 161 (207 asked plainly): no unit holds "now" or "currently", and the passages in force
    are searched anyway."""
    for asked in (
        "what is the refund window currently",
        "currently, what is the refund window",
        "what is currently the refund window",
        "what is the refund window right now",
        "what is the refund window as of today",
    ):
        assert without_chatter(asked) == "what is the refund window", asked
    assert without_chatter("refund window right now?") == "refund window?"
    # A side of a comparison, or a time the question is about, stays.
    for asked in ("refund policy now vs in 2025", "what changed between 2025 and now", "api returns E-2410 what now"):
        assert without_chatter(asked) == asked


def test_a_link_given_as_where_the_asker_looked_is_not_the_question():
    """ "{question} (see https://wiki.example.com/handbook)" answered 78 of 253 in the replay: its host and path were
    read as question words."""
    for asked in (
        "how long are invoices kept (see https://wiki.example.com/handbook)",
        "re https://wiki.example.com/handbook - how long are invoices kept",
        "how long are invoices kept? https://wiki.example.com/handbook",
    ):
        assert without_chatter(asked).rstrip("?") == "how long are invoices kept", asked
    named = "is status.northwindcloud.example down"  # a name without a scheme may be what is asked about
    assert without_chatter(named) == named


def test_asking_someone_to_look_it_up_and_what_the_asker_is_doing_are_not_the_question():
    """In the replay, "Could you look up {question}?" answered 126 of the 253 answerable train/dev questions right,
    "Trying to find out {question}" 121, "TL;DR {question}" 136, "{question}? thanks in advance!! :)" 152 (207
    asked plainly); each now 207."""
    for asked, read in (
        ("Can you check how long invoices are kept?", "how long invoices are kept?"),
        ("Could you look up the refund window for annual plans?", "the refund window for annual plans?"),
        ("Trying to find out how long invoices are kept", "how long invoices are kept"),
        ("Looking for the hotel cap in london", "the hotel cap in london"),
        ("Need info: hotel cap london", "hotel cap london"),
        ("wondering about the hotel cap for london", "the hotel cap for london"),
        ("TL;DR how long are invoices kept", "how long are invoices kept"),
        ("how long are invoices kept? thanks in advance!! :)", "how long are invoices kept?"),
        ("how long are invoices kept?? pls help asap", "how long are invoices kept??"),
        ("how long are invoices kept 🙏🙏", "how long are invoices kept"),
        # Asked to confirm, a claim is put up to be checked.
        ("can you confirm that the refund window is 14 days?", "the refund window is 14 days?"),
    ):
        assert without_chatter(asked) == read, asked
    assert without_chatter("what are we looking for in candidates") == "what are we looking for in candidates"


def test_you_written_u_asks_as_you_does():
    assert without_chatter("can u tell me the refund window for consumers plz") == "the refund window for consumers"
    assert without_chatter("could u check the hotel cap in tokyo") == "the hotel cap in tokyo"


def test_a_pasted_log_line_s_time_stamp_host_and_process_are_not_the_question():
    """Found by use: "how do I fix it?" under "2026-12-07T10:00:01Z ERROR sync: E-4412 conflict" was refused, the
    stamp's digits read as names the answer must hold ("01z", "2026-12-07t10"); six such messages in the demo mesh
    were all refused before, all answered right after. The error code stays, and so does a time of day asked about."""
    assert without_chatter("2026-12-07T10:00:01Z ERROR sync: E-4412 conflict\nhow do I fix it?") == (
        "ERROR sync: E-4412 conflict\nhow do I fix it?"
    )
    assert without_chatter("[2026-12-07 11:02:45] ERROR upload: E-2301 uploads blocked") == (
        "ERROR upload: E-2301 uploads blocked"
    )
    assert without_chatter("2026-12-07 02:00:13,442 WARN W-2203") == "WARN W-2203"
    assert without_chatter("Dec  7 10:00:01 laptop-22 nwc-sync[4411]: W-2203 storage almost full") == (
        "W-2203 storage almost full"
    )
    assert without_chatter("is the 02:00 UTC maintenance window moving") == "is the 02:00 UTC maintenance window moving"


def test_who_knows_before_a_question_asks_anyone():
    """ "Who knows {question}?" was answered right 155 times of 253 in the replay; before a question's own opening
    word it asks anyone (172 now), while "who knows the admin password" asks who does and keeps its words."""
    assert without_chatter("Who knows how long invoices are kept?") == "how long invoices are kept?"
    assert without_chatter("who knows whether sso is on starter?") == "sso is on starter?"
    assert without_chatter("who knows the admin password") == "who knows the admin password"
