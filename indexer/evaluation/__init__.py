"""Measuring retrieval on a question set: questions and their targets, metrics with
bootstrap intervals, the evaluation of stored strategies × modes, reports, and tuning
the search settings by cross-validation."""

from .run import Evaluation, Row, evaluate
from .sets import MRR_METRIC, NDCG_METRIC, Question, load_questions, resolve

__all__ = [
    "Evaluation",
    "MRR_METRIC",
    "NDCG_METRIC",
    "Question",
    "Row",
    "evaluate",
    "load_questions",
    "resolve",
]
