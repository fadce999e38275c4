"""Numerical drivers, written once against the array backend.

LocalUpdate (Charles & Konečný, arXiv:2103.05032) is the one driver behind FedAvg, FedProx, local
SGD, Reptile and FOMAML: an algorithm is the data ``LocalUpdate(Θ, α, γ, ServerOpt)``;
:mod:`fedtheory.algorithms.surrogate` holds the surrogate loss it minimizes on quadratics.

>>> from fedtheory.algorithms import Theta, LocalUpdate, ServerOpt
>>> LocalUpdate(Theta.uniform(4), alpha=0.0, gamma=0.01, server=ServerOpt("nesterov", lr=0.5, momentum=0.9)).K
4
"""

from fedtheory.algorithms.local_update import (
    CLIENT_SAMPLING,
    MESSAGE_PATHS,
    SERVER_KINDS,
    ClientSampler,
    History,
    LocalUpdate,
    ServerOpt,
    client_pseudo_gradients,
    run_local_update,
)
from fedtheory.algorithms.theta import Theta

__all__ = [
    "Theta",
    "ServerOpt",
    "LocalUpdate",
    "History",
    "client_pseudo_gradients",
    "run_local_update",
    "SERVER_KINDS",
    "MESSAGE_PATHS",
    "CLIENT_SAMPLING",
    "ClientSampler",
]
