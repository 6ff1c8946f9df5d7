import sys

from poolscope_bench.cli import main

if sys.argv[1:2] == ["fleet"]:
    from poolscope_bench.fleet import main as fleet_main

    sys.exit(fleet_main(sys.argv[2:]))
sys.exit(main())
