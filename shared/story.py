"""A question told after the asker's story: "I'm staying in San Francisco next week, what's the max I can spend on
a hotel per night?", "My manager asked me this morning and I couldn't find it. How long are invoices kept?".

Read as one question, the story's words weigh as much as the question's, and its opening hides what kind of
question it is: "staying", "next" and "week" are held by no unit, so the hotel caps covered a fifth of the question,
and "how long ..." after a story was no longer read as asking for a span. Asked after four such stories, the 304
recorded train and dev questions gave 53-149 of 253 right, against 207 asked plainly.

So the question is read from where it asks (`told_and_asked`), and its story only as far as the passages can answer
to it (`kept_context`): its identifiers, bare numbers, countries, currencies and the names the passages never write
("Texas", "Platinum") are conditions an answer must hold; its amounts ("3 nights") and its other words the passages
write ("Starter", "consumer", "rental") choose between answers holding as much of the question; who told or asked
("a customer called me"), when ("next week") and a plain word the passages never write ("staying", "confused") are
the telling, not the question. The gateway searches with the question and what of the story the best passages of a
first search write (`searched_for`).
"""

import dataclasses
import re

from shared.currencies import question_currencies
from shared.places import countries_named
from shared.quantities import question_amounts
from shared.text import content_terms, identifiers, question_terms

# What opens a question: a question word or a verb asked with ("can I", "is there", "do we").
_OPENER = (
    r"(?:what|whats|what's|how|hows|how's|who|whom|whose|whos|who's|when|where|which|why|can|could|should|would|will"
    r"|do|does|did|is|isn'?t|are|aren'?t|am|was|were|may|might|must|shall|have|has|any|anything)\b"
)
_OPENS_QUESTION = re.compile(rf"^\W*{_OPENER}", re.IGNORECASE)
# A sentence ends at its mark; "IIRC" or "AFAIK" opens one of the asker's telling ("... kept IIRC it changed").
_SENTENCE = re.compile(r"(?<=[.!?;…])\s+|\s+(?=(?i:iirc|afaik|afaict)\b)")
_ABBREVIATION = re.compile(
    r"(?:^|\s)(?:incl|excl|e\.g|i\.e|approx|vs|etc|esp|no|nr|min|max|dept|inc|ltd|co|mr|ms|mrs|dr|st|[a-z])\.$",
    re.IGNORECASE,
)
# Inside a sentence, a story's clause ends at a comma, a colon or a spaced dash (with "so" or "but" after it) before
# a question's opening word: "I'm staying in SF next week, what's the max ...".
_CLAUSE = re.compile(rf"\s*(?:[,:]|\s[-–—])\s*(?:(?:so|but|and)\s+)?(?={_OPENER})", re.IGNORECASE)
# The asker telling of themselves: "I was reading the docs last night and got confused: ...". Words before a question
# told without "I" or "we" name its topic or a part of it ("E-5002 overdue invoice - when do you suspend us", "paid in
# EUR, will my refund come back in dollars", "trip to london: hotel cap and meal allowance"): they are asked.
_PRONOUNS = r"i|i'm|im|i've|ive|i'd|we|we're|we've|me|us|iirc|afaik|afaict|imo|imho"
_TELLER = re.compile(rf"\b(?:{_PRONOUNS})\b", re.IGNORECASE)
# The asker's words for themselves and what is theirs: a first-person text tells of the asker.
FIRST_PERSON_WORDS = rf"{_PRONOUNS}|my|our"
_FIRST_PERSON = re.compile(rf"\b(?:{FIRST_PERSON_WORDS})\b", re.IGNORECASE)
_VERB = re.compile(
    r"\b(?:am|is|are|was|were|be|been|will|would|has|have|had|got|gets|keeps?|did|does|do|can|can't|cannot|won't"
    r"|isn't|wasn't|doesn't|didn't|wants?|needs?|asks?|asking|says?|said|told|tells?|tries|trying|going|planning"
    r"|working|staying|moving|travell?ing|thinking|wondering|using)\b|\w+'s\b|\w+ed\b",
    re.IGNORECASE,
)
_COLON = re.compile(r":\s+")
_CLOSING_DASH = re.compile(r"\s+[-–—]+\s+")
_COMMA = re.compile(r",\s+")
_ELLIPSIS = re.compile(r"(?:\.{2,}|…)\s*$")
# A message labelling its parts: "Context: we're on the Business plan and have 60 users. Question: how much does an
# extra seat cost?". What the context says is the story, whatever its person.
_CONTEXT_LABEL = re.compile(r"(?:^|(?<=[\s.?!]))(?:context|background|situation)\s*:\s*", re.IGNORECASE)
_QUESTION_LABEL = re.compile(r"(?:^|(?<=[\s.?!]))(?:question|q)\s*:\s*", re.IGNORECASE)
# Where a clause states the condition a question asks under: "if ...", "unless ...", "in case ...", "whenever ...", and
# "when ..." or "once ..." opening the clause ("when we renew, is the price locked?").
_CONDITION = re.compile(r"\b(?:if|unless|in\s+case|whenever)\b|^\W*(?:when|once)\b", re.IGNORECASE)
# The asker's story in parentheses: "how long are invoices kept (I checked the handbook but couldn't find it)".
_TOLD_ASIDE = re.compile(rf"\s*\(\s*((?:{FIRST_PERSON_WORDS})\b[^()?]*)\)", re.IGNORECASE)
# When the story happens ("next month", "this morning", "yesterday"): the telling, not a condition; read as its
# words, "month" led "do I need approval" to a unit about what Finance audits "every month".
_WHEN = re.compile(
    r"\b(?:(?:next|last|this|coming|past)\s+(?:week|month|year|morning|afternoon|evening|night|quarter|weekend|time)"
    r"|yesterday|today|tonight|tomorrow|earlier|recently|lately)\b",
    re.IGNORECASE,
)
# Who told or asked the asker ("a customer just called me", "my manager asked me"): people in the telling, not
# what is asked; read as the story's words, "customer" (in most passages here) lifted near misses over the answer
# threshold. A name stays ("Team" in "a customer on the Team plan asked me").
_TELLERS = frozenset(
    content_terms(
        "customer customers client clients manager boss colleague colleagues coworker coworkers teammate teammates"
        " friend friends someone somebody people person guy guys"
    )
)
# The workplace shorthand of the asker's day ("I'm OOO tomorrow", "need it by EOD", "I'm WFH today"): capitals, but
# no names; read as names the passages never write, each was required of the answer (a question told with "(I'm OOO
# tomorrow, so a quick answer would be great)" under it: 157 of the 253 answerable train/dev questions answered right
# in the replay, 207 asked alone).
_SHORTHAND = frozenset(content_terms("ooo wfh afk eod eow cob eom eta fyi asap tbd tba brb imo imho"))
# What the answer is needed for: "We need this for an audit next month", "asking for my team". Read as the story's
# words, "audit" (which the passages write) was searched for and lowered the scores of what is asked: through a mail
# ending so, 0.755 of the train/dev questions were answered right in the mesh (0.818 asked plainly).
_PURPOSE = re.compile(
    r"\b(?:need|needs|needed|want|wants|wanted|asking|asked|ask)\s+(?:this|it|that|the\s+answer|to\s+know)?\s*for\b"
    r"[^.!?;]*",
    re.IGNORECASE,
)
# A closing clause telling why it is asked, its teller unsaid: "... - need this for a customer", "- asking for my team";
# or what the asker recalls: "... IIRC it changed recently".
_TELLING = re.compile(
    r"^(?:need(?:ed|s)?|asking|trying|want(?:ed)?|wondering|checking|iirc|afaik|afaict)\b(?![^?]*\?)", re.IGNORECASE
)
_STATEMENT = re.compile(r"(?<=[.!?;:,])\s+")  # a capital after these opens a statement: it names nothing
# A question that asks about the story itself ("is it covered?", "can I expense it?") is read whole.
# "it" in "how long does it take", "is it possible to" refers to nothing.
_REFERS_BACK = re.compile(
    r"\b(?:it(?!\s+(?:takes?|possible\s+to)\b)|its|that|this|they|them|those|these|one|ones)\b", re.IGNORECASE
)

# Asking of the one before: "what about business accounts?", "same for P2?", "what if ...".
_FOLLOW_UP = re.compile(r"^\W*(?:(?:what|how)\s+about|same\s+(?:for|with)|what\s+if)\b", re.IGNORECASE)
# A part opening with what it is asked for (its joining "and" left out), and asking nothing itself, asks the question
# before it again: "and for business customers?" after "what is the consumer refund window?" ("in 2025 could
# customers ..." asks its own, and "on-call pay" names a thing).
_ON_ANOTHER = re.compile(r"^\W*(?:for|with|in|on(?![\s-]+call)|about)\b", re.IGNORECASE)
# A word that asks: a question word or a modal verb.
ASKING_WORD = re.compile(
    r"\b(?:what|whats|what's|how|who|whom|when|where|which|why|can|could|should|may|might|must|shall)\b", re.IGNORECASE
)


def opens_question(text: str) -> bool:
    """Whether a text opens as a question does: with a question word or a verb asked with ("can I", "is there")."""
    return bool(_OPENS_QUESTION.match(text))


def referring_word(text: str) -> re.Match | None:
    """The first word of a text that refers to something said before it ("it" in "is it covered?", "that" in "how
    much does that cost"); None when it has none."""
    return _REFERS_BACK.search(text)


def follows_up(question: str) -> bool:
    """Whether a question asks of one before it: "what about business accounts?", "for enterprise?"."""
    return bool(_FOLLOW_UP.match(question) or (_ON_ANOTHER.match(question) and not ASKING_WORD.search(question)))


def refers_back(question: str) -> bool:
    """Whether a question refers to something said before it: a word such as "it" or "that" before what it could
    refer to in its own words ("is it covered?", "how much does that cost"; not "how big is team storage and what
    happens when its full", nor "E-4412 what is it")."""
    found = referring_word(question)
    if found is None:
        return False
    before = question[: found.start()]
    return len(question_terms(before)) < 2 and not identifiers(before)


def _sentences(text: str) -> list[str]:
    """The text's sentences; an abbreviation's full stop ("prices incl. VAT", "e.g. a card") ends none."""
    sentences: list[str] = []
    for piece in _SENTENCE.split(text):
        if sentences and _ABBREVIATION.search(sentences[-1]):
            sentences[-1] = f"{sentences[-1]} {piece}"
        elif piece.strip():
            sentences.append(piece)
    return sentences


def _told_colon(question: str) -> str:
    """The question with a colon closing a story told in the first person read as a full stop ("I was reading the
    docs and got confused: ..."; not "a customer called me, old policy: ...", whose colon closes a topic)."""
    found = _COLON.search(question)
    if found and _FIRST_PERSON.search(re.split(r"[,.;!?]", question[: found.start()])[-1]):
        return f"{question[: found.start()]}. {question[found.end() :]}"
    return question


def _is_story(text: str) -> bool:
    """Whether a statement tells of the asker: the asker is its subject or object ("I", "we", "me"), or it says
    something of theirs in a sentence ("our api calls fail with 429 since this morning.") or with a verb ("my laptop
    was stolen - ..."). "malware on my laptop - what severity ..." names a topic."""
    if _OPENS_QUESTION.match(text) or text.rstrip().endswith("?"):
        return False
    said = text.rstrip().endswith((".", "!")) or _VERB.search(text)
    return bool(_TELLER.search(text) or (_FIRST_PERSON.search(text) and said))


def _asks_its_own(asked: str) -> bool:
    """Whether what follows a story asks something of its own: a word to look for, and no opening question about
    the story ("can I expense it?"; "msa liability cap, and is it different for ..." asks about its own topic)."""
    return bool(question_terms(asked)) and not (_OPENS_QUESTION.match(asked) and _REFERS_BACK.search(asked))


def told_and_asked(question: str) -> tuple[str, str]:
    """The story told around a question and the question itself ("", question when there is no story, or when
    the question asks about the story: "we took a client to dinner and ordered wine, is it covered?").

    A story is told in the first person: in whole sentences before the question ("My manager asked me this
    morning and I couldn't find it. refund window consumer") or after it ("how long are invoices kept? I'm new
    here."), in a clause before its opening word ("I'm on the Starter plan, can I get phone support?") or after a
    dash closing it ("refund window - asking because my manager wants to know"); in parentheses ("(I checked the
    handbook)"), in closing sentences saying why it is asked ("... asking again since nobody answered"), and in what a
    message labels its context ("Context: ... Question: ...")."""
    if "?" not in question and question.rstrip().endswith("."):
        return "", question  # a statement ("X lowers Y, which causes Z.") asks nothing after a story
    labelled = _labelled(question)
    if labelled is not None and question_terms(labelled[1]):
        story, asked = told_and_asked(labelled[1])
        return " ".join(part for part in (labelled[0], story) if part), asked
    asides = [found.group(1).strip() for found in _TOLD_ASIDE.finditer(question)]
    if asides:
        story, asked = told_and_asked(_TOLD_ASIDE.sub("", question).strip())
        if not question_terms(asked):
            return "", question
        return " ".join([story, *asides]).strip(), asked
    sentences = _sentences(_told_colon(question.strip()))
    # Closing sentences saying why it is asked tell ("how long are invoices kept... asking again since nobody
    # answered"), even after a question that says "we".
    end = len(sentences)
    while end > 1 and _TELLING.match(sentences[end - 1]):
        end -= 1
    sentences, telling = sentences[:end], sentences[end:]
    if telling:  # the ellipsis before it closes nothing the question says
        sentences[-1] = _ELLIPSIS.sub("", sentences[-1])
    first = 0
    while first < len(sentences) - 1 and _is_story(sentences[first]):
        first += 1
    # After the sentence that asks, sentences that tell.
    last = next((i for i in range(first, len(sentences)) if sentences[i].rstrip().endswith("?")), len(sentences) - 1)
    if not all(_is_story(s) for s in sentences[last + 1 :]):
        last = len(sentences) - 1
    before, asked, after = sentences[:first], " ".join(sentences[first : last + 1]), sentences[last + 1 :] + telling
    # "A customer just called me about this, refund window consumer"; "I'm on Starter - can I get phone support".
    for clause in (_COMMA, _CLAUSE):
        clauses = clause.split(asked, maxsplit=1)
        if len(clauses) == 2 and _is_story(clauses[0]) and _asks_its_own(clauses[1]):
            # A condition is asked ("if we cancel after 2 months, do we get a refund?"): from it on, the clause is the
            # question's, and only what comes before it tells ("my manager asked me to find out - if we cancel ...").
            condition = _CONDITION.search(clauses[0])
            if condition is None:
                before, asked = [*before, clauses[0]], clauses[1]
            else:
                told = clauses[0][: condition.start()].strip(" -–—,:;")
                before = [*before, told] if told else before
                asked = f"{clauses[0][condition.start() :]}, {clauses[1]}"
            break
    dashes = list(_CLOSING_DASH.finditer(asked))
    closing = [asked[: dashes[-1].start()], asked[dashes[-1].end() :]] if dashes else [asked]
    if len(closing) == 2 and (_is_story(closing[1]) or _TELLING.match(closing[1])) and question_terms(closing[0]):
        asked, after = closing[0], [closing[1], *after]
    story = " ".join([*before, *after])
    if not story or not _asks_its_own(asked):
        return "", question
    return story, asked


def _labelled(question: str) -> tuple[str, str] | None:
    """(what a message's "Context:" parts say, the rest without its "Question:" label); None without a context
    label."""
    marks = sorted(
        [(found.start(), found.end(), True) for found in _CONTEXT_LABEL.finditer(question)]
        + [(found.start(), found.end(), False) for found in _QUESTION_LABEL.finditer(question)]
    )
    if not any(context for *_, context in marks):
        return None
    told: list[str] = []
    asked: list[str] = []
    position, context = 0, False
    for start, end, next_context in marks:
        (told if context else asked).append(question[position:start].strip())
        position, context = end, next_context
    last = question[position:].strip()
    if context and not any(asked) and len(sentences := _sentences(last)) > 1 and sentences[-1].rstrip().endswith("?"):
        # "Background: annual Team plan, bought 20 days ago. can we get a refund?": the question closes the context.
        told, asked, last = [*told, " ".join(sentences[:-1])], [sentences[-1]], ""
    (told if context else asked).append(last)
    return " ".join(part for part in told if part), " ".join(part for part in asked if part)


@dataclasses.dataclass(frozen=True)
class Told:
    """A story as far as the passages can answer to it."""

    text: str = ""  # its words kept (below), in order, with its function words: "cost about 3200 in total"
    # Its numbers, names (a capital inside a sentence), countries and currencies: conditions an answer must hold.
    required: frozenset[str] = frozenset()
    # Its other words the passages write ("starter", "consumer", "rental"): an answer holding them fits the story
    # better, one holding none is not refused for it ("manager" and "docs" in "my manager asked me ...").
    optional: frozenset[str] = frozenset()

    def joined(self, asked: set[str]) -> tuple[set[str], set[str]]:
        """The question's words (`asked`) with the story's, and those of them only the story's optional words are."""
        optional = set(self.optional - asked)
        return asked | self.required | optional, optional


def _names(told: str) -> set[str]:
    """The words of the countries and currencies a story names."""
    return countries_named(told) | set().union(*question_currencies(told).values())


def _is_number_or_place(token: str, terms: set[str], named: set[str]) -> bool:
    """A number ("3200", "E-4421"), a country or a currency."""
    return any(ch.isdigit() for ch in token) or terms <= named


def _story_tokens(told: str, written: set[str] | frozenset[str]) -> list[tuple[str, bool]]:
    """The story's tokens an answer (or a search) can be held to, each with whether it is a condition, in order; its
    function words too, with no condition. A condition: a number or a place, or a name the passages never write
    ("Platinum", "Paris": is it abroad?). The others kept: an amount it tells of ("3 nights", "13 hours": a unit
    whose range holds it leads, one saying nothing of it still answers "what's the hotel cap per night" after "I'm
    in London for 3 nights"), and its other words the passages write ("Starter", "consumer"). Left out, the telling:
    who told or asked, when ("next month"), what it is needed for ("we need this for an audit"; its numbers and
    names stay conditions), and a word no passage writes ("staying", "confused"); a capital opening a statement
    names nothing, nor workplace shorthand ("OOO", "EOD")."""
    told = _WHEN.sub(" ", told)
    purpose = content_terms(" ".join(found.group(0) for found in _PURPOSE.finditer(told)))
    named = _names(told)
    measured = set().union(*(amount.terms for amount in question_amounts(told)))
    out: list[tuple[str, bool]] = []
    for statement in _STATEMENT.split(told):
        for position, token in enumerate(statement.split()):
            terms = content_terms(token)
            if terms and not terms <= measured:
                unknown_name = position > 0 and token[:1].isupper() and not terms <= written and not terms <= _SHORTHAND
                if _is_number_or_place(token, terms, named) or unknown_name:
                    out.append((token, True))
                    continue
                if not terms <= written or terms <= _TELLERS or terms <= purpose:
                    continue
            out.append((token, False))
    return out


def searched_for(question: str, written: set[str] | frozenset[str] = frozenset()) -> str:
    """What a question told after a story is searched for (search_text); the question itself when there is no
    story."""
    story, asked = told_and_asked(question)
    return search_text(story, asked, written) if story else question


def search_text(story: str, asked: str, written: set[str] | frozenset[str]) -> str:
    """The question asked after a story, after what of the story an answer can be held to (_story_tokens), with
    `written` the words of the passages a first search found ("business customer" in "We're a business customer and
    bought 10 days ago, can we get a refund?"). The story's other words would pull in passages about the telling
    ("manager", "morning") and lower every passage's score against what is asked, which the answer decision reads."""
    kept = [token.strip(",.;:!?") for token, _ in _story_tokens(story, written) if content_terms(token)]
    return " ".join([*kept, asked])


def kept_context(told: str, written: set[str]) -> Told:
    """The story as far as the passages can answer to it (_story_tokens), without when it happened ("next month",
    "this morning"): its conditions required, its other words optional."""
    tokens = _story_tokens(told, written)
    text = " ".join(token for token, _ in tokens)
    asked = question_terms(text)
    required = asked & set().union(*(content_terms(token) for token, condition in tokens if condition))
    return Told(text, frozenset(required), frozenset(asked - required))
