"""The stand-in partner's script refuses what it could not play, naming the field."""

from __future__ import annotations

from typing import Any

import pytest

from local_aws.scenarios.partner import PartnerScript


@pytest.mark.parametrize(
    ("keywords", "field"),
    [
        ({"server_error_rate": 1.0}, "server_error_rate"),
        ({"client_error_on": 0}, "client_error_on"),
    ],
)
def test_a_script_that_could_not_play_is_refused_naming_the_field(
    keywords: dict[str, Any], field: str
) -> None:
    with pytest.raises(ValueError, match=f"^{field}: "):
        PartnerScript(seed=1, **keywords)


def test_the_nth_message_gets_the_one_4xx_and_a_seed_replays_the_rest() -> None:
    first, second = (
        PartnerScript(seed=3, client_error_on=2),
        PartnerScript(seed=3, client_error_on=2),
    )
    answers = [first.answer(m) for m in ("a", "b", "a", "c")]
    assert answers[1] == 400
    assert answers == [second.answer(m) for m in ("a", "b", "a", "c")]
