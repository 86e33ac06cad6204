from gjkcli.cli import main

main()
