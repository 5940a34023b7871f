"""The engine: the estimator contract, the fold of contributions into mergeable state, inference."""
