import sys

from era5etl.cli import main

sys.exit(main())
