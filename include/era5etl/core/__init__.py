"""The vocabulary every stage shares: months, areas and grids, variables, input errors."""
