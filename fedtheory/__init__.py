"""fedtheory: federated-optimization theory as executable, checkable objects.

>>> import fedtheory
>>> fedtheory.__version__
'0.1.0'
"""

__version__ = "0.1.0"
