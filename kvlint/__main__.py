from kvlint.entry import main

main()
