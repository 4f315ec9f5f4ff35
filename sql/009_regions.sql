-- Regions by outline (read.region_weights): PostGIS where the server has it, and two tables a SQL
-- user can join. era5_regions holds each outline asked for once per grid (its WKB's sha256 the key);
-- era5_region_weights each grid point's weight in it: the area of the point's cell inside the outline
-- (square degrees) x cos(latitude), the points whose cell misses the outline left out. A server
-- without PostGIS gets neither; a region read then says the extension is missing.
DO $$
BEGIN
    IF NOT EXISTS (SELECT 1 FROM pg_available_extensions WHERE name = 'postgis') THEN
        RETURN;
    END IF;
    CREATE EXTENSION IF NOT EXISTS postgis;
    CREATE TABLE IF NOT EXISTS era5_regions (
        region_id  serial      PRIMARY KEY,
        grid       text        NOT NULL,
        name       text        NOT NULL,
        source     text        NOT NULL,
        iso        text,
        digest     text        NOT NULL,
        outline    geometry(Geometry, 4326) NOT NULL,
        created_at timestamptz NOT NULL DEFAULT now(),
        UNIQUE (grid, digest)
    );
    CREATE TABLE IF NOT EXISTS era5_region_weights (
        region_id   integer NOT NULL REFERENCES era5_regions ON DELETE CASCADE,
        location_id integer NOT NULL,
        latitude    float8  NOT NULL,
        longitude   float8  NOT NULL,
        weight      float8  NOT NULL,
        PRIMARY KEY (region_id, location_id)
    );
    -- The HTTP reads' read-only role (db.reader) fills a region it is the first to ask for.
    IF EXISTS (SELECT 1 FROM pg_roles WHERE rolname = 'era5_reader') THEN
        GRANT SELECT, INSERT ON era5_regions, era5_region_weights TO era5_reader;
        GRANT USAGE ON SEQUENCE era5_regions_region_id_seq TO era5_reader;
    END IF;
END
$$;
