"""Speed, memory and scale: index and query times, stores and servers, as ratios within one run."""
