"""Settings of lifecycle: Consolidation and decay (the lifecycle workers).

Imported by memory_platform/settings.py, so each is a Django setting (read as
``django.conf.settings.NAME``, overridden in tests with the ``settings`` fixture); what each
environment variable means is in memory_platform/configuration.py and the configuration reference.
Nothing here may import a model or anything that needs the apps loaded.
"""

from __future__ import annotations

from memory_platform.env import env_choice, env_float, env_int

# Consolidation (memories/similarity.py says what each threshold means; bench/consolidation.py measured them).
CONSOLIDATION_RELATED = env_float("CONSOLIDATION_RELATED", 0.85)
CONSOLIDATION_NEAR_DUPLICATE = env_float("CONSOLIDATION_NEAR_DUPLICATE", 0.95)
CONSOLIDATION_CONTRADICTION = env_float("CONSOLIDATION_CONTRADICTION", 0.94)
# One statement with a number or a negation changed is a contradiction from this similarity on, when
# at least CONSOLIDATION_CONFLICT_FRAME of their words line up (bench/contradictions.py measured both).
CONSOLIDATION_CONFLICT = env_float("CONSOLIDATION_CONFLICT", 0.70)
CONSOLIDATION_CONFLICT_FRAME = env_float("CONSOLIDATION_CONFLICT_FRAME", 0.70)
# What the worker merges without a curator: "exact" duplicates only, "near" ones too, or "off".
CONSOLIDATION_AUTO_MERGE = env_choice("CONSOLIDATION_AUTO_MERGE", "exact", ("exact", "near", "off"))
# At most this share of an organization's memories changes automatically in one run; the rest are proposals.
CONSOLIDATION_AUTO_MERGE_SHARE = env_float("CONSOLIDATION_AUTO_MERGE_SHARE", 0.02)
CONSOLIDATION_TIME_BUDGET = env_float("CONSOLIDATION_TIME_BUDGET_SECONDS", 600.0)
CONSOLIDATION_NEIGHBOURS = env_int("CONSOLIDATION_NEIGHBOURS", 10)
# Decay (lifecycle/decay.py): freshness halves every DECAY_HALF_LIFE_DAYS idle (longer for memories read often);
# unreviewed memories below DECAY_STALE_FRESHNESS and unread for DECAY_STALE_DAYS become stale proposals.
DECAY_HALF_LIFE_DAYS = env_int("DECAY_HALF_LIFE_DAYS", 30)
DECAY_STALE_FRESHNESS = env_float("DECAY_STALE_FRESHNESS", 0.1)
DECAY_STALE_DAYS = env_int("DECAY_STALE_DAYS", 90)
DECAY_STALE_PER_RUN = env_int("DECAY_STALE_PER_RUN", 200)
