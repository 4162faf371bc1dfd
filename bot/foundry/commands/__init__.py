"""One module per `foundry` sub-command: add_parser(subparsers) and run(args) -> int."""
