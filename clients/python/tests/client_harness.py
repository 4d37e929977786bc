"""Shared by the client's tests: the live server handle (see conftest.py)."""

from __future__ import annotations

from dataclasses import dataclass

from tests.support.accounts import Account, make_account

from pixelmill.resources import Resources


@dataclass
class Live:
    url: str
    resources: Resources

    def account(self, credits: int = 100, plan: str = "enterprise") -> Account:
        return make_account(self.resources, credits=credits, plan=plan, tag="client")
