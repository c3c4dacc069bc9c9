"""The initials a city goes by, read from GeoNames beside the names a text writes (shared/places.py)."""

import pytest

from shared.places import city_initials


@pytest.mark.parametrize(
    ("text", "initials"),
    [
        ("$350 in New York, San Francisco, London and Tokyo", {"nyc", "ny", "sf"}),
        ("an office in Los Angeles", {"la"}),
        ("the courts of Washington, D.C.", {"dc"}),
        ("the District of Columbia", {"dc"}),
        ("Ho Chi Minh City", {"hcmc", "hcmv"}),
        ("NEW YORK", {"nyc", "ny"}),  # a shouted heading names the city all the same
    ],
)
def test_a_city_named_in_a_text_holds_the_initials_it_goes_by(text, initials):
    assert city_initials(text) == initials


def test_a_name_that_is_no_big_city_s_holds_no_initials():
    # London and Tokyo go by no initials; "York" alone is another city; "Newark" is not "New York".
    assert city_initials("London, Tokyo, York and Newark") == set()
    # Initials are held where the whole name is written, not a word of it.
    assert city_initials("a new yorkshire terrier") == set()
