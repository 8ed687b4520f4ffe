"""Models: the offline stand-in and name -> model resolution."""
