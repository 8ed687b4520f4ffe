"""An ``ask`` callback for approval tests: it records each request and gives one answer."""

from __future__ import annotations

from troupe.runtime.approvals import ApprovalRequest


class AskLog:
    """An ask callback that records each request and answers ``answer``."""

    def __init__(self, answer: bool) -> None:
        self.answer = answer
        self.asked: list[ApprovalRequest] = []

    def __call__(self, request: ApprovalRequest) -> bool:
        self.asked.append(request)
        return self.answer
