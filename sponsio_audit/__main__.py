"""``python -m sponsio_audit``: the same command line as ``sponsio-audit``."""

from sponsio_audit.entry import main

if __name__ == "__main__":
    main()
