"""``python -m sponsio_audit``: the same command line as ``sponsio-audit``."""

from sponsio_audit.cli import main

if __name__ == "__main__":
    main()
