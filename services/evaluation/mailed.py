"""Questions sent as mail and chat clients send them: each labelled question put in one template of a fixed set,
chosen with a seed, with what the clients add around it (a reply's quoted thread, an Outlook history, a signature
block, a gateway's banner, a pasted subject, a chat mention and emoji), so how well the funnel reads a question out of
its mail (shared/mail.py, shared/chatter.py) is measured on the same cases and gold as the plain run (`ragmesh eval
--mailed SEED`). Unanswerable questions are sent so too: the mail must not make an answer more likely.
"""

from services.evaluation.cases import EvalCase
from services.evaluation.stories import in_templates

TEMPLATES = (
    "{question}\n\nOn Mon, 7 Dec 2026 at 09:12, Sam Lee <sam@example.com> wrote:\n> Please send the figures for the "
    "audit.\n> Thanks, Sam",
    "{question}\n\n-----Original Message-----\nFrom: Sam Lee\nSent: Monday, December 7, 2026 9:12 AM\nTo: Dana Smith"
    "\nSubject: audit\n\nPlease send the figures for the audit.",
    "Hi,\n\n{question}\n\nBest regards,\nDana Smith\nAcme Corp | Finance\nT: +44 20 7946 0000\nwww.acme.example",
    "CAUTION: This email originated from outside the organization. Do not click links unless you trust the sender."
    "\n\n{question}",
    "Re: audit figures\n\n{question}\n\nSent from my iPhone",
    "<@U02ABCDEF> {question} :pray:",
    'Customer asks: "{question}"',
    "Good afternoon team,\n\nI hope you're all doing well.\n\n{question}\n\nLooking forward to your reply.\n\n"
    "Kind regards,\nDana",
)


def as_mailed(cases: list[EvalCase], seed: int) -> list[EvalCase]:
    """Every case with its question, as asked, in one of TEMPLATES."""
    return in_templates(cases, TEMPLATES, seed, keep_mark=True)
