"""What the token budget did to a result: a note whenever it left fewer chunks than ``k``.

The budget (``RetrievalSettings.token_budget``) caps the tokens of chunk text a result holds; it
never cuts ``k`` silently: the result's notes say how many of ``k`` fit and how to raise it."""

from __future__ import annotations

BUDGET_NOTE_PREFIX = "token budget: "


def budget_note(returned: int, k: int, token_budget: int, left_out: int | None) -> str:
    """The note for a result whose ``returned`` chunks are all of ``k`` that fit ``token_budget``,
    ``left_out`` ranked chunks (None: some, not counted) not fitting beside them."""
    more = "more ranked chunks" if left_out is None else f"{left_out} more ranked chunk{'s' * (left_out != 1)}"
    return (f"{BUDGET_NOTE_PREFIX}{returned} of the {k} chunks asked for fit in {token_budget} tokens of "
            f"chunk text ({more} did not fit); raise the budget for more (--max-tokens on the command line, "
            "token_budget in Python)")


def is_budget_note(note: str) -> bool:
    return note.startswith(BUDGET_NOTE_PREFIX)


def set_budget_note(notes: list[str], returned: int, k: int, token_budget: int, left_out: int | None) -> None:
    """Put the budget's note in ``notes`` (replacing an earlier one) while fewer than ``k`` chunks
    are there and ranked ones did not fit (``left_out``: how many, None: some); drop it otherwise."""
    notes[:] = [n for n in notes if not is_budget_note(n)]
    if returned < k and left_out != 0:
        notes.append(budget_note(returned, k, token_budget, left_out))
