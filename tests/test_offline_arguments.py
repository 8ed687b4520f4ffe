"""How the offline stand-in reads a call's arguments from a request: each
value to the parameter its words name, from the schema it is given."""

from __future__ import annotations

from typing import Any

import pytest

from troupe.models._offline_args import fill_arguments

HOLD: dict[str, Any] = {
    "properties": {
        "card_number": {"type": "string"},
        "title_id": {"type": "string"},
        "pickup_branch": {"type": "string"},
    },
    "required": ["card_number", "title_id", "pickup_branch"],
}


def test_each_identifier_and_name_goes_to_the_parameter_its_word_names() -> None:
    text = "place a hold on title T-48213 for card EL-219044, pickup at Oakley"

    args = fill_arguments(HOLD, text)

    assert args == {"card_number": "EL-219044", "title_id": "T-48213", "pickup_branch": "Oakley"}


def test_an_identifier_in_another_language_goes_by_its_accentless_word() -> None:
    schema = {"properties": {"event_id": {"type": "string"}, "card_number": {"type": "string"}}}

    args = fill_arguments(schema, "Inscris la carte EL-242618 à l'événement EV-1205-1")

    assert args == {"event_id": "EV-1205-1", "card_number": "EL-242618"}


def test_an_amount_is_never_read_out_of_an_identifier() -> None:
    schema = {"properties": {"card_number": {"type": "string"}, "amount": {"type": "number"}}}

    assert fill_arguments(schema, "what does card EL-248193 owe") == {"card_number": "EL-248193"}
    assert fill_arguments(schema, "take 18.50 from card EL-260371") == {
        "card_number": "EL-260371",
        "amount": 18.5,
    }


@pytest.mark.parametrize(
    ("text", "method"),
    [("pay 12 euros on contactless", "contactless"), ("pays en espèces: cash", "cash")],
)
def test_a_parameter_with_allowed_values_takes_the_one_the_request_names(
    text: str, method: str
) -> None:
    schema = {
        "properties": {"method": {"type": "string", "enum": ["cash", "card", "contactless"]}},
        "required": ["method"],
    }

    assert fill_arguments(schema, text) == {"method": method}


def test_a_parameter_with_allowed_values_none_of_which_is_named_is_left_out() -> None:
    schema = {
        "properties": {"method": {"type": "string", "enum": ["cash", "contactless"]}},
        "required": ["method"],
    }

    assert fill_arguments(schema, "take the payment please") == {}


def test_a_detail_between_commas_stays_with_its_step_in_a_plan() -> None:
    from troupe.models.offline import _plan
    from troupe.models.team_view import TeamRoute

    team = [
        TeamRoute("cards", ("card number", "member")),
        TeamRoute("loans", ("loans", "on loan")),
    ]

    steps = _plan("Find the card number of Ana Lind, born 1979-10-30, and list her loans.", team)

    assert steps == [
        ("Find the card number of Ana Lind, born 1979-10-30", "cards"),
        ("list her loans", "loans"),
    ]


SHELL: dict[str, Any] = {
    "properties": {"command": {"type": "string"}},
    "required": ["command"],
}


def test_the_requests_own_words_are_never_run_as_a_command() -> None:
    from troupe.models._offline_args import argument_evidence

    text = "Show me what's in batches/batch_log.csv"

    assert "command" not in fill_arguments(SHELL, text)
    assert argument_evidence(SHELL, text) < 0
    assert fill_arguments(SHELL, "run `wc -l batches/batch_log.csv`") == {
        "command": "wc -l batches/batch_log.csv"
    }


SECRET_SET: dict[str, Any] = {
    "properties": {"name": {"type": "string"}, "value": {"type": "string"}},
    "required": ["name"],
}


@pytest.mark.parametrize(
    "text",
    [
        "Store my archive password 'Vaxjo1861' as the secret RIKSARKIVET_PASSWORD",
        "save 'Vaxjo1861' as secret riksarkivet_password",
    ],
)
def test_a_secret_is_stored_under_the_name_written_after_secret_never_its_value(
    text: str,
) -> None:
    args = fill_arguments(SECRET_SET, text)

    assert args["name"].upper() == "RIKSARKIVET_PASSWORD"
    assert args["name"] != "Vaxjo1861"
