-- ERA5-Land has rows at land points only, so a month's expected rows are its hours x the land points
-- of its area. That count is taken from the data when the month is staged (the download's land mask:
-- points with a value in some variable at some hour, era5etl.stage.land) and kept here, so that the
-- validation compares the loaded month with what was downloaded, never with what was loaded: a month
-- that lost land points on the way fails. NULL for single levels (every grid point is a row).
ALTER TABLE era5_months
    ADD COLUMN IF NOT EXISTS land_points integer CHECK (land_points > 0);
