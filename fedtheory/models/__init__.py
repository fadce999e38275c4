"""Models beyond linear ones: small torch networks, and federations whose clients train them.

torch is optional: importing :mod:`fedtheory.models` does not import it; the submodules do.
"""
