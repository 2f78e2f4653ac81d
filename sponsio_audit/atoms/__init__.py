"""sponsio-audit."""
