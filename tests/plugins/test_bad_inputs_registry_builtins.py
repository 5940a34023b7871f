"""Bad registry calls with the built-in plugins loaded: unknown kinds, names and parameters
list what is registered.

Each is an offeval error naming the column or parameter and the user's own row labels,
never a crash from pandas, numpy, pyarrow or the OS, and never a silent wrong number.
"""

from __future__ import annotations

from bad_input_logs import fails

from offeval import RegistryError, get_registry
from offeval_importance import IS


# -- the registry --------------------------------------------------------------------------
def test_bad_registry_calls():
    reg = get_registry()
    fails(lambda: reg.names("metric"), RegistryError, "unknown component kind 'metric'")
    fails(
        lambda: reg.get("estimator", "nope"),
        RegistryError,
        "registered: b-ipw, balanced_ips, beta_ips",
    )
    fails(lambda: reg.register("estimator", "has space", IS), RegistryError, "not a valid name")
    fails(lambda: reg.create("environment", "default", seeds=1), RegistryError, "seeds")
