"""The benchmark peers: each is a script the runner starts as a process of its own (the Python
SDK's in its own virtual environment), so they import nothing from ``bench``."""
