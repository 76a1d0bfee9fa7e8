"""`slaschema.textsafe.cut`: the one way a value from a file is cut short for a message."""

from slaschema.textsafe import cut


def test_a_value_up_to_the_width_is_kept_and_a_longer_one_cut_to_it():
    assert cut("x" * 60) == "x" * 60
    assert cut("x" * 61) == "x" * 57 + "..." and len(cut("x" * 61)) == 60
    assert cut("abcdefghij", 8) == "abcde..." and cut("", 5) == ""
    assert len(cut("y" * 4_000_000, 120)) == 120
