from foundry.cli import main

raise SystemExit(main())
