"""The package version (also recorded in every output schedlab writes)."""

from importlib.metadata import PackageNotFoundError, version

try:
    __version__ = version("schedlab")
except PackageNotFoundError:  # running from a source tree that is not installed
    __version__ = "0.1.0+unknown"
