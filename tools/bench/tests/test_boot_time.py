"""tools/bench/boot_time.py on real boots (TCG, a few seconds each): both ways nom gets its
address (static as the Linux guest, DHCP as `make run`) reach an answer through every console
milestone, in order, and the JSON records them with the machine. No timing is asserted."""
import json

import pytest

from bench import boot_time


@pytest.mark.boot
def test_nom_static_and_dhcp_boots_reach_every_milestone_in_order(tmp_path):
    assert boot_time.main(["--guests", "nom,nom-dhcp", "--boots", "1",
                           "--output", str(tmp_path)]) == 0
    result = json.loads((tmp_path / "boot-time.json").read_text())
    assert result["machine"]["accel"] in ("tcg", "kvm")
    for guest in ("nom", "nom-dhcp"):
        (boot,) = result["guests"][guest]["boots"]
        names = [n for n, _ in boot_time.MILESTONES[guest]] + ["answer"]
        assert list(boot) == names, f"{guest}: milestones seen {list(boot)}"
        times = [boot[n] for n in names]
        assert times == sorted(times) and times[0] > 0, f"{guest}: out of order {boot}"


@pytest.mark.unit
def test_an_unknown_guest_is_refused_with_the_choices(capsys):
    with pytest.raises(SystemExit):
        boot_time.main(["--guests", "nom,osx"])
    assert "nom-dhcp" in capsys.readouterr().err
