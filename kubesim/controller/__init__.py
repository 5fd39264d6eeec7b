"""The simulated Argo Rollouts controller: rollouts, analysis runs, replica sets and pods.

Each reconciler is level-triggered: it reads current objects from the shared ``Cache`` (fed by the store's
write callbacks, like an informer) and writes the difference back to the store with the field-manager name of
the real component. Nothing here sleeps; reconcilers return when they next want to run and the simulation's
timer heap calls them back.
"""

from __future__ import annotations
