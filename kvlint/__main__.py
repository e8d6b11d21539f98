from kvlint.cli import main

main()
