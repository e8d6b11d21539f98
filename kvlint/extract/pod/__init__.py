"""extract/pod: machinery every input kind shares: containers and pods, argv and shell arithmetic, env,
CEL and DRA claims, GPU selectors and sharing, synthetic containers, bounded numbers, engine arguments."""
