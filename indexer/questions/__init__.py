"""Question sets made from a user's own documents: the passages worth a question, a
simulated searcher's known-item queries (prose and code), questions written by an LLM,
and the made-up sets kept beside an index for `eval --generate` (`on_demand`).

Made-up questions are a tool, not the truth: see docs/results.md, "Made-up questions: do
they choose like real ones?"."""

from .generate import GENERATOR_VERSION, QuestionSet, make_questions
from .reuse import cached_questions
from .simulate import Knobs

__all__ = ["GENERATOR_VERSION", "Knobs", "QuestionSet", "cached_questions", "make_questions"]
