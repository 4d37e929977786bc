from pixelmill.cli import main

main()
