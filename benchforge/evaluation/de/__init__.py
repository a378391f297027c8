"""The data-engineering scorer: node comparison, CS / CFS / SR scoring, mutations, reward hacks."""
